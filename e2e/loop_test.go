package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// jsonRun is `run --headless --json --wait` running in the background, its
// records read as they come.
type jsonRun struct {
	cmd     *exec.Cmd
	records chan headless.Record
	seen    []headless.Record
}

func startJSONRun(t *testing.T, f fixture) *jsonRun {
	t.Helper()
	cmd := exec.Command(f.bin, "run", "--headless", "--json", "--wait")
	cmd.Dir = f.root
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	jr := &jsonRun{cmd: cmd, records: make(chan headless.Record, 1024)}
	go func() {
		defer close(jr.records)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var r headless.Record
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				// Reported by the reader: every line must parse.
				r = headless.Record{Type: "unparseable", Text: sc.Text()}
			}
			jr.records <- r
		}
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	})
	return jr
}

// next reads records until one satisfies ok.
func (jr *jsonRun) next(t *testing.T, d time.Duration, what string, ok func(headless.Record) bool) headless.Record {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		select {
		case r, open := <-jr.records:
			if !open {
				t.Fatalf("the run ended before %s; records:\n%s", what, jr.dump())
			}
			require.NotEqual(t, "unparseable", r.Type, "every line of --json output parses: %q", r.Text)
			jr.seen = append(jr.seen, r)
			if ok(r) {
				return r
			}
		case <-deadline.C:
			t.Fatalf("no %s within %s; records:\n%s", what, d, jr.dump())
		}
	}
}

func (jr *jsonRun) dump() string {
	var b strings.Builder
	for _, r := range jr.seen {
		b.WriteString(string(r.Task) + " " + string(r.Kind) + " " + r.Text + "\n")
	}
	return b.String()
}

func kind(k task.Kind) func(headless.Record) bool {
	return func(r headless.Record) bool { return r.Type == "event" && r.Kind == k }
}

// The whole loop from the CLI, the way a script drives it: the ids in `run
// --headless --json` output go straight to correct, expire, approve and
// merge; --wait picks up a task added later; prune then cleans up.
func TestHeadlessJSONDrivesTheLoopFromAddToMergedBranch(t *testing.T) {
	parallel(t)
	fix := []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}
	f := newRepoFixture(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}}, "")
	f.addTask(t, "Fix calc", "implement")
	jr := startJSONRun(t, f)

	delivered := jr.next(t, 60*time.Second, "the brief delivered", kind(task.EvBriefDelivered))
	id := delivered.Task
	require.Len(t, string(id), 26, "the real task id, not a placeholder")
	require.Contains(t, f.orch(t, "status"), string(id)+"  Fix calc", "status names the same task by the same id")

	out := f.orch(t, "correct", string(id), "keep the public API as it is")
	require.Contains(t, out, "delivered to session "+delivered.Session[len(delivered.Session)-8:])
	jr.next(t, 10*time.Second, "the decision delivered", kind(task.EvDecisionDelivered))

	// The next attempt fixes calc; expiring this one starts it.
	data, err := json.Marshal(agent.Script{RecordDir: f.record, Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {{Edits: fix}}}})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(f.script, data, 0o644))
	f.orch(t, "expire", string(id))
	awaiting := jr.next(t, 90*time.Second, "the task awaiting review", func(r headless.Record) bool {
		return r.Type == "event" && (r.Kind == task.EvTaskAwaiting || r.Kind == task.EvTaskFailed)
	})
	require.Equal(t, task.EvTaskAwaiting, awaiting.Kind, jr.dump())

	branch := "orchestra/" + strings.ToLower(string(id))
	out = f.orch(t, "approve", string(id))
	require.Contains(t, out, "The work is on branch "+branch+", 1 commit ahead of main; merge it with `orchestra-tui merge "+id.Short()+"`")
	out = f.orch(t, "merge", id.Short())
	require.Contains(t, out, "Merged "+branch+" into main by fast-forward")
	jr.next(t, 10*time.Second, "the merge in the ledger", kind(task.EvBranchMerged))
	var show []byte
	show, err = exec.Command("git", "-C", f.root, "show", "main:calc.go").Output()
	require.NoError(t, err)
	require.Equal(t, project.CalcFixed, string(show), "the base branch holds the change")

	// --wait: the run is still there for a task added now. Its one phase
	// is gated on main, which now passes.
	f.orch(t, "add", "--title", "Check calc", "--goal", "Check that calc passes.", "--verify", project.VerifyCommand,
		"--harness", "scripted", "--pipeline", "frame")
	second := jr.next(t, 10*time.Second, "the second task added", kind(task.EvTaskAdded))
	jr.next(t, 60*time.Second, "the second task awaiting review", func(r headless.Record) bool {
		return r.Type == "event" && r.Task == second.Task && (r.Kind == task.EvTaskAwaiting || r.Kind == task.EvTaskFailed)
	})

	require.NoError(t, jr.cmd.Process.Signal(syscall.SIGINT))
	var verdicts []headless.Record
	for r := range jr.records {
		require.NotEqual(t, "unparseable", r.Type, r.Text)
		if r.Type == "verdict" {
			verdicts = append(verdicts, r)
		}
	}
	require.NoError(t, jr.cmd.Wait(), "both tasks green: exit 0")
	require.Len(t, verdicts, 2)
	for _, v := range verdicts {
		require.True(t, *v.Green, "%s: %s", v.Task, v.Verdict)
	}

	// prune removes the merged task's worktree and branch and keeps the
	// one still waiting for review.
	worktree := filepath.Join(f.root, filepath.FromSlash(repo.WorktreesDir), string(id))
	require.DirExists(t, worktree)
	out = f.orch(t, "prune")
	require.Contains(t, out, "removed "+id.Short()+" "+branch+" (merged, Fix calc)")
	require.NoDirExists(t, worktree)
	branches, err := exec.Command("git", "-C", f.root, "branch", "--list", "orchestra/*").Output()
	require.NoError(t, err)
	require.NotContains(t, string(branches), branch)
	require.Contains(t, string(branches), "orchestra/"+strings.ToLower(string(second.Task)))

	// And the run with nothing left to do says so and exits 1.
	cmd := exec.Command(f.bin, "run", "--headless")
	cmd.Dir = f.root
	combined, err := cmd.CombinedOutput()
	require.Error(t, err)
	require.Equal(t, 1, cmd.ProcessState.ExitCode())
	require.Contains(t, string(combined), "nothing to run: every task is at rest (1 awaiting-review, 1 merged)")
}

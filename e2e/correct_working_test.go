package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agentcli"
	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A correction typed while the agent works (its shell tool is running a
// command that waits on a gate the test holds shut) is reported delivered
// and reaches the model exactly once, for Claude Code (the pinned release
// and the oldest supported) and opencode. While Claude Code works, a
// message typed into it waits in its prompt box as a queued message ("Press
// up to edit queued messages") until the tool call returns, and opencode
// queues it until its turn ends: neither is input left unsent, and the
// submit key sent again for it would be reported as a failed delivery.
func TestCorrectionWhileWorkingIsDeliveredOnce(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		harness string
		bin     func(t *testing.T) string
	}{
		{"claude", "claude", func(t *testing.T) string { return claudecli.Require(t) }},
		{"oldest claude", "claude", func(t *testing.T) string {
			bin := os.Getenv(oldestClaudeEnv)
			if bin == "" {
				if os.Getenv("CI") != "" {
					t.Fatal(oldestClaudeEnv + " is not set: .ci/run installs the oldest supported Claude Code")
				}
				t.Skip(oldestClaudeEnv + " is not set")
			}
			return bin
		}},
		{"opencode", "opencode", func(t *testing.T) string { return agentcli.OpenCode.Require(t) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			parallel(t)
			correctWhileWorking(t, c.harness, c.bin(t))
		})
	}
}

// workingCorrection is the operator's correction; its token is what the
// stub's log is searched for.
// It runs over several lines, as an operator's often does: opencode shows
// such a paste as "[Pasted ~3 lines]".
const workingCorrection = "Keep the error message of Divide unchanged (token CORR-7f3a).\n" +
	"Do not touch the other functions of calc.go.\n" +
	"Run the tests once more when you are done."

func correctWhileWorking(t *testing.T, harness, bin string) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	require.NoError(t, project.WriteProject(root))
	gate := filepath.Join(t.TempDir(), "gate")
	require.NoError(t, syscall.Mkfifo(gate, 0o600))

	corrected := make(chan struct{}, 1)
	srv := modelstub.New(correctionRules(gate, corrected))
	srv.Logf = t.Logf
	base, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })

	r, err := repo.Open(root)
	require.NoError(t, err)
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	tk, err := coord.Prepare(task.Task{Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance,
		Verify: project.VerifyCommand, Harness: harness, Pipeline: task.Pipeline{task.PhaseImplement}}, r, time.Now())
	require.NoError(t, err)
	require.NoError(t, st.TaskInsert(t.Context(), signedTask(t, tk)))
	worktree := filepath.Join(r.Root, filepath.FromSlash(repo.WorktreesDir), string(tk.ID))

	cfg := config.Default()
	home := t.TempDir()
	spec := cfg.Harness[harness]
	switch harness {
	case "claude":
		require.NoError(t, modelstub.SeedHome(home, worktree))
		spec = modelstub.Harness(spec, bin, home, base)
	default:
		spec.Argv = append([]string{bin}, spec.Argv[1:]...)
		spec.SetEnv = seedOpenCode(t, home, base, worktree)
	}
	cfg.Harness[harness] = spec
	cfg.Pane = config.Pane{Cols: 120, Rows: 40}
	cfg.Lease.Tick.Duration = 100 * time.Millisecond
	// The gate holds the tool call as long as the test wants: no lease
	// runs out meanwhile, and no stuck pane is resubmitted.
	cfg.Lease.Length.Duration, cfg.Lease.Window.Duration = 5*time.Minute, 4*time.Minute
	cfg.Stuck.AutoResubmit = 0
	b := &bundle{root: root, srv: srv, st: st, repo: r, cfg: cfg, home: home}
	b.start(t)

	// The gate opens for writing once the agent's shell tool reads it: the
	// agent is at work.
	opened := make(chan *os.File, 1)
	go func() {
		f, err := os.OpenFile(gate, os.O_WRONLY, 0)
		if err == nil {
			opened <- f
		}
	}()
	pane := func() string {
		if v, ok := b.c.Pane(tk.ID); ok {
			return v.Text()
		}
		return ""
	}
	var w *os.File
	select {
	case w = <-opened:
	case <-time.After(5 * time.Minute):
		t.Fatalf("the agent never ran the gated command; pane:\n%s", pane())
	}
	defer w.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	res, err := b.c.Do(ctx, coord.Command{Kind: coord.CmdCorrect, TaskID: tk.ID, Text: workingCorrection})
	require.NoError(t, err)
	t.Logf("correction: %s; pane:\n%s", res.Message, pane())
	require.True(t, res.Delivered, "%s\npane:\n%s", res.Message, pane())
	require.NotContains(t, res.Message, "failed")

	_, err = w.WriteString("open\n")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	select {
	case <-corrected:
	case <-time.After(2 * time.Minute):
		t.Fatalf("the correction never reached the model; pane:\n%s\nevents:\n%s", pane(), b.dump())
	}
	b.waitEvent(t, tk.ID, 3*time.Minute, func(e task.Event) bool { return e.Kind == task.EvSessionExited || ended(e) })

	// In every request, the whole conversation holds the correction at
	// most once; and the last one holds it.
	var last modelstub.Request
	for _, req := range srv.Requests() {
		if !req.IsMainLoop() {
			continue
		}
		last = req
		require.LessOrEqual(t, strings.Count(conversation(req), "CORR-7f3a"), 1, "the correction arrived twice:\n%s", conversation(req))
	}
	require.Equal(t, 1, strings.Count(conversation(last), "CORR-7f3a"), conversation(last))
}

// conversation is every message's text and tool results, joined.
func conversation(req modelstub.Request) string {
	var sb strings.Builder
	for _, m := range req.Messages {
		sb.WriteString(m.Role + ": " + m.Text + "\n")
		for _, r := range m.ToolResults {
			sb.WriteString("  result: " + r.Content + "\n")
		}
	}
	return sb.String()
}

// correctionRules answer the implement brief with a shell command that
// waits on gate; once the correction shows in a request (signalled on
// corrected), the artifact and the sentinel are written. Until it shows, a
// turn ends with a line that says the agent waits for it (opencode sends a
// message queued while it works once its turn has ended).
func correctionRules(gate string, corrected chan<- struct{}) []modelstub.Rule {
	return []modelstub.Rule{{
		Name: "correct while working",
		When: func(req modelstub.Request) bool {
			b, ok := modelstub.FindBrief(req)
			return req.IsMainLoop() && ok && b.Phase == task.PhaseImplement
		},
		Reply: func(req modelstub.Request) modelstub.Reply {
			b, _ := modelstub.FindBrief(req)
			at := -1
			for i, m := range req.Messages {
				if strings.Contains(conversation(modelstub.Request{Messages: []modelstub.Message{m}}), "CORR-7f3a") {
					at = i
				}
			}
			after := 0
			from := b.Index + 1
			if at >= 0 {
				from = at
			}
			for _, m := range req.Messages[from:] {
				if m.Role == "assistant" {
					after++
				}
			}
			dir := req.WorkingDir()
			abs := func(p string) string {
				if filepath.IsAbs(p) {
					return p
				}
				return filepath.Join(dir, p)
			}
			if at < 0 {
				if after == 0 {
					return modelstub.Reply{Text: "Waiting for the build.", ToolUses: []modelstub.ToolUse{
						modelstub.Bash("read line < "+gate, "Wait for the build")}}
				}
				return modelstub.Reply{Text: "The build is done; waiting for the operator.", StopReason: "end_turn"}
			}
			if after == 0 {
				select {
				case corrected <- struct{}{}:
				default:
				}
			}
			artifact, sentinel := b.Artifact, b.Sentinel
			if artifact == "" {
				artifact = task.ArtifactPath(b.Phase)
			}
			if sentinel == "" {
				sentinel = task.SentinelPath
			}
			switch after {
			case 0:
				return modelstub.Reply{ToolUses: []modelstub.ToolUse{modelstub.Write(abs(artifact), task.Example(b.Phase)+"\n")}}
			case 1:
				return modelstub.Reply{ToolUses: []modelstub.ToolUse{modelstub.Write(abs(sentinel), string(b.Phase)+"\n")}}
			}
			return modelstub.Reply{Text: "Done, with the correction.", StopReason: "end_turn"}
		},
	}}
}

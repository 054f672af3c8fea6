package coord

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestMain lets the test binary act as the scripted agent: the scripted
// harness launches {{self}} agent --script ..., and {{self}} is this binary.
func TestMain(m *testing.M) {
	if os.Getenv("ORCH_AGENT_MAIN") == "1" {
		args := os.Args[1:]
		if len(args) > 0 && args[0] == "agent" {
			args = args[1:]
		}
		os.Exit(agent.Main(args, os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

type bundle struct {
	root    string
	record  string
	storeAt string
	st      *sqlite.Store
	repo    *repo.Repo
	cfg     config.Config
	script  string
	c       *Coordinator
	notices <-chan Notice
	cancel  context.CancelFunc
	events  []task.Event
}

// setup makes a throwaway calc project, a store and a coordinator whose
// scripted harness is this test binary, and starts it.
func setup(t *testing.T, sc agent.Script, tweak func(*config.Config)) *bundle {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, demo.WriteProject(root))
	b := &bundle{root: root, record: filepath.Join(t.TempDir(), "record")}
	zero := 0
	if sc.PaceMS == nil {
		sc.PaceMS = &zero
	}
	sc.RecordDir = b.record
	data, err := json.Marshal(sc)
	require.NoError(t, err)
	b.script = filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(b.script, data, 0o644))

	b.cfg = config.Default()
	h := b.cfg.Harness["scripted"]
	h.SetEnv = map[string]string{"ORCH_AGENT_MAIN": "1"}
	h.Env = append(h.Env, "GOCACHE", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY")
	b.cfg.Harness["scripted"] = h
	b.cfg.Pane = config.Pane{Cols: 100, Rows: 30}
	b.cfg.Lease.Tick.Duration = 100 * time.Millisecond
	if tweak != nil {
		tweak(&b.cfg)
	}
	b.repo, err = repo.Open(root)
	require.NoError(t, err)
	b.storeAt = sqlite.DefaultPath(root)
	b.st, err = sqlite.Open(b.storeAt)
	require.NoError(t, err)
	t.Cleanup(func() { b.st.Close() })
	b.start(t)
	return b
}

// start runs a fresh coordinator instance on the bundle's store.
func (b *bundle) start(t *testing.T) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	c, err := New(Params{
		Store: b.st, Repo: b.repo, Config: b.cfg,
		Vars:      map[string]string{"self": self, "script": b.script},
		StopGrace: time.Second, Settle: 30 * time.Millisecond, SampleEvery: 100 * time.Millisecond,
	})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	notices, unsub := c.Subscribe()
	b.c, b.notices, b.cancel = c, notices, cancel
	go func() { _ = c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		unsub()
		<-c.Done()
	})
}

// stop ends the coordinator instance and waits until it has.
func (b *bundle) stop() {
	b.cancel()
	<-b.c.Done()
}

func (b *bundle) add(t *testing.T) task.ID {
	t.Helper()
	res, err := b.c.Do(context.Background(), Command{Kind: CmdAdd, Task: &task.Task{
		Title: "Fix calc", Goal: demo.Goal, Acceptance: demo.Acceptance, Verify: demo.VerifyCommand, Harness: "scripted",
	}})
	require.NoError(t, err)
	return res.TaskID
}

// waitEvent reads notices until one event satisfies ok, failing the test
// with the events seen when the deadline passes first.
func (b *bundle) waitEvent(t *testing.T, d time.Duration, ok func(task.Event) bool) task.Event {
	t.Helper()
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		select {
		case n, open := <-b.notices:
			if !open {
				t.Fatalf("notices closed; events so far:\n%s", b.dump())
			}
			if n.Event == nil {
				continue
			}
			b.events = append(b.events, *n.Event)
			if ok(*n.Event) {
				return *n.Event
			}
		case <-deadline.C:
			t.Fatalf("timed out after %s; events so far:\n%s", d, b.dump())
		}
	}
}

func (b *bundle) dump() string {
	var sb strings.Builder
	for _, e := range b.events {
		sb.WriteString(string(e.Kind))
		if e.Reason != "" {
			sb.WriteString(" [" + string(e.Reason) + "]")
		}
		sb.WriteString(" " + e.Text + "\n")
	}
	return sb.String()
}

func kindIs(k task.Kind) func(task.Event) bool {
	return func(e task.Event) bool { return e.Kind == k }
}

func ended(e task.Event) bool {
	return e.Kind == task.EvTaskAwaiting || e.Kind == task.EvTaskFailed || e.Kind == task.EvTaskCancelled
}

// gitShow returns a file's content at a revision.
func gitShow(t *testing.T, dir, rev, path string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "show", rev+":"+path).CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

package coord

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestMain lets the test binary act as the scripted agent: the scripted
// harness launches {{self}} agent --script ..., and {{self}} is this binary.
func TestMain(m *testing.M) {
	agent.MainIfReexec()
	os.Exit(withFleetKeyDir(m))
}

// bundle is a coordinator whose sessions are the scripted agent (this test
// binary) in real ptys, on a throwaway calc project and SQLite store.
type bundle struct {
	running
	root    string
	record  string
	storeAt string
	st      *sqlite.Store
	repo    *repo.Repo
	cfg     config.Config
	script  string
	// control, when set before start, is the control socket to serve.
	control string
	// skew is added to the coordinator's clock, so a test can move time
	// forward for the clocks a snapshot computes.
	skew atomic.Int64
	// wrap, when set, wraps the real store the coordinator is given, so a
	// test can inject a failure into one write.
	wrap func(store.Store) store.Store
	// hook, when set, is called with each new coordinator before it runs,
	// so a test can install a signal.
	hook func(*Coordinator)
}

// setup makes a throwaway calc project, a store and a coordinator whose
// scripted harness is this test binary, and starts it.
func setup(t testing.TB, sc agent.Script, tweak func(*config.Config)) *bundle {
	t.Helper()
	return setupWrapped(t, sc, tweak, nil)
}

// setupHooked is setup with hook called on the coordinator before it runs.
func setupHooked(t testing.TB, sc agent.Script, tweak func(*config.Config), hook func(*Coordinator)) *bundle {
	t.Helper()
	return setupWith(t, sc, tweak, nil, hook)
}

// setupWrapped is setup with the coordinator's store wrapped by wrap.
func setupWrapped(t testing.TB, sc agent.Script, tweak func(*config.Config), wrap func(store.Store) store.Store) *bundle {
	t.Helper()
	return setupWith(t, sc, tweak, wrap, nil)
}

func setupWith(t testing.TB, sc agent.Script, tweak func(*config.Config), wrap func(store.Store) store.Store, hook func(*Coordinator)) *bundle {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	return setupIn(t, root, sc, tweak, wrap, hook)
}

// setupIn is setupWith on an existing repository at root.
func setupIn(t testing.TB, root string, sc agent.Script, tweak func(*config.Config), wrap func(store.Store) store.Store, hook func(*Coordinator)) *bundle {
	t.Helper()
	b := &bundle{root: root, record: filepath.Join(t.TempDir(), "record"), wrap: wrap, hook: hook}
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
	h.SetEnv = map[string]string{agent.ReexecEnv: "1"}
	h.Env = append(h.Env, "GOCACHE", "GOPATH", "GOMODCACHE", "GOFLAGS", "GOTOOLCHAIN", "GOPROXY")
	// The agent is this race-built test binary: on a loaded machine it
	// can take longer than the harness's 10s to start (engine tests saw it).
	h.LaunchTimeout = session.Duration{Duration: time.Minute}
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
func (b *bundle) start(t testing.TB) {
	t.Helper()
	self, err := os.Executable()
	require.NoError(t, err)
	var st store.Store = b.st
	if b.wrap != nil {
		st = b.wrap(st)
	}
	c, err := New(Params{
		Store: st, Repo: b.repo, Config: b.cfg,
		Vars:      map[string]string{"self": self, "script": b.script},
		StopGrace: time.Second, Settle: 30 * time.Millisecond, SampleEvery: 100 * time.Millisecond,
		Control: b.control,
		Now:     func() time.Time { return time.Now().Add(time.Duration(b.skew.Load())) },
	})
	require.NoError(t, err)
	if b.hook != nil {
		b.hook(c)
	}
	b.run(t, c)
}

// add adds the calc task on the scripted harness, with the default pipeline.
func (b *bundle) add(t testing.TB) task.ID {
	t.Helper()
	return b.addTask(t, "scripted", project.VerifyCommand, nil)
}

func kindIs(k task.Kind) func(task.Event) bool {
	return func(e task.Event) bool { return e.Kind == k }
}

func ended(e task.Event) bool {
	return e.Kind == task.EvTaskAwaiting || e.Kind == task.EvTaskFailed || e.Kind == task.EvTaskCancelled
}

// gitShow returns a file's content at a revision.
func gitShow(t testing.TB, dir, rev, path string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", dir, "show", rev+":"+path).CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

// addPipeline adds the calc task with a pipeline of its own, so a test runs
// only the phases it is about.
func (b *bundle) addPipeline(t testing.TB, p task.Pipeline) task.ID {
	t.Helper()
	return b.addTask(t, "scripted", project.VerifyCommand, p)
}

// launchedPid returns the agent's pid from a session.launched event.
func launchedPid(t testing.TB, ev task.Event) int {
	t.Helper()
	require.Equal(t, task.EvSessionLaunched, ev.Kind)
	var d LaunchedData
	require.NoError(t, json.Unmarshal(ev.Data, &d), "launched event data %q", ev.Data)
	require.Positive(t, d.Pid)
	return d.Pid
}

// waitPane reads notices until the task's live pane shows want, recording
// events on the way, and returns when it saw it.
func (b *bundle) waitPane(t testing.TB, id task.ID, want string, d time.Duration) time.Time {
	t.Helper()
	if v, ok := b.c.Pane(id); ok && strings.Contains(v.Text(), want) {
		return time.Now()
	}
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	shows := func(n Notice) bool {
		v, ok := b.c.Pane(id)
		return n.Pane == id && ok && strings.Contains(v.Text(), want)
	}
	if _, ok := b.next(t, deadline.C, shows); !ok {
		screen := ""
		if v, ok := b.c.Pane(id); ok {
			screen = v.Text()
		}
		t.Fatalf("pane never showed %q within %s; screen:\n%s\nevents:\n%s", want, d, screen, b.dump())
	}
	return time.Now()
}

// waitRecord waits, on file-system events in the agent's record dir, until
// ok holds for it. The agent records what it received in its own process,
// after the console has typed it, so this is the signal that it arrived.
func (b *bundle) waitRecord(t testing.TB, d time.Duration, what string, ok func() bool) {
	t.Helper()
	require.NoError(t, os.MkdirAll(b.record, 0o755))
	w, err := fsnotify.NewWatcher()
	require.NoError(t, err)
	defer w.Close()
	require.NoError(t, w.Add(b.record))
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for !ok() {
		select {
		case <-w.Events:
		case err := <-w.Errors:
			require.NoError(t, err)
		case <-deadline.C:
			t.Fatalf("the agent's record never showed %s within %s; events:\n%s", what, d, b.dump())
		}
	}
}

// inputsOf returns the agent's logged inputs of one kind.
func (b *bundle) inputsOf(t testing.TB, kind string) []agent.InputRecord {
	t.Helper()
	recs, err := agent.ReadInputLog(b.record)
	require.NoError(t, err)
	var out []agent.InputRecord
	for _, r := range recs {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// recordedBrief returns the n-th brief the agent recorded for a phase
// attempt, or "" when it has not (completely) arrived yet.
func (b *bundle) recordedBrief(p task.Phase, attempt, n int) string {
	data, err := os.ReadFile(filepath.Join(b.record, fmt.Sprintf("brief-%s-%d-%d.md", p, attempt, n)))
	if err != nil || !strings.Contains(string(data), task.HeadingDeadEnds) {
		return ""
	}
	return string(data)
}

// ledger returns the task's stored events that satisfy ok.
func (b *bundle) ledger(t testing.TB, id task.ID, ok func(task.Event) bool) []task.Event {
	t.Helper()
	evs, err := b.st.EventList(context.Background(), store.EventListParams{TaskID: id})
	require.NoError(t, err)
	var out []task.Event
	for _, e := range evs {
		if ok(e) {
			out = append(out, e)
		}
	}
	return out
}

func refusalOf(reason task.Reason) func(task.Event) bool {
	return func(e task.Event) bool { return e.Kind == task.EvRefusal && e.Reason == reason }
}

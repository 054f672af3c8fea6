package coord

import (
	"context"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker/workertest"
)

// The fake harness: its sessions are workertest fakes, so its argv only
// feeds the launch fingerprint (a real binary, run once with --version).
const fakeHarness = "fake"

// fakeBundle is a coordinator whose sessions are fakes, made inside a
// synctest bubble: the coordinator's clock, tickers and timers are the
// bubble's, so leases and stuck clocks of minutes run out in a moment, at
// exactly their deadlines. The store (SQLite), the repository, its
// worktrees and the verify gate are real: their IO blocks no goroutine
// for long, and while it runs the bubble's clock stands still.
type fakeBundle struct {
	running // its began is the bubble's time when the first coordinator started
	root    string
	st      *sqlite.Store
	cfg     config.Config
	agents  *workertest.Factory
	// wrap, if set, wraps the store the coordinator is given (a fault
	// injector).
	wrap func(store.Store) store.Store
}

// setupFake must be called inside synctest.Test. tweak adjusts the
// configuration; by default the lease is the real default (20 minutes,
// renewal window 5 minutes) and ticks every second.
func setupFake(t *testing.T, tweak func(*config.Config)) *fakeBundle {
	t.Helper()
	return setupFakeWrapped(t, tweak, nil)
}

// setupFakeWrapped is setupFake with the coordinator's store wrapped by
// wrap (when set), to inject the store's faults.
func setupFakeWrapped(t *testing.T, tweak func(*config.Config), wrap func(store.Store) store.Store) *fakeBundle {
	t.Helper()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	b := &fakeBundle{root: root, agents: workertest.NewFactory(t), wrap: wrap}
	b.cfg = config.Default()
	b.cfg.Harness[fakeHarness] = session.Spec{
		Name: fakeHarness, Argv: []string{"true"}, Delivery: session.DeliveryType, Resubmit: session.ResubmitSubmit,
	}
	b.cfg.Pane = config.Pane{Cols: 100, Rows: 30}
	b.cfg.Lease.Tick.Duration = time.Second
	if tweak != nil {
		tweak(&b.cfg)
	}
	b.run(t, sqlite.DefaultPath(root), nil)
	return b
}

// run starts a coordinator on the store at path, taking up sessions
// through hosts when set; the bundle follows it from then on.
func (b *fakeBundle) run(t *testing.T, path string, hosts Hosts) {
	t.Helper()
	r, err := repo.Open(b.root)
	require.NoError(t, err)
	b.st, err = sqlite.Open(path)
	require.NoError(t, err)
	st := b.st
	t.Cleanup(func() { st.Close() })
	var given store.Store = b.st
	if b.wrap != nil {
		given = b.wrap(b.st)
	}
	c, err := New(Params{Store: given, Repo: r, Config: b.cfg, Start: b.agents.Start, Hosts: hosts, StopGrace: 10 * time.Second})
	require.NoError(t, err)
	b.events = nil
	b.running.run(t, c)
	select {
	case <-c.Loaded():
	case err := <-b.ended:
		t.Fatalf("the coordinator stopped while starting: %v", err)
	}
}

// bareOrigin makes a bare repository the project's origin, the remote a
// configuration with [fleet] remote = "origin" pushes to, and returns its
// path.
func (b *fakeBundle) bareOrigin(t *testing.T) string {
	t.Helper()
	remote := filepath.Join(t.TempDir(), "calc.git")
	require.NoError(t, project.Git(b.root, "init", "-q", "--bare", "-b", "main", remote))
	require.NoError(t, project.Git(b.root, "remote", "add", "origin", remote))
	return remote
}

// add adds a task on the fake harness, with a gate that passes at once.
func (b *fakeBundle) add(t *testing.T, p task.Pipeline) task.ID {
	t.Helper()
	return b.addTask(t, fakeHarness, "true", p)
}

// waitEvent reads notices until an event satisfies ok. The guard is on the
// bubble's clock: a coordinator that never sends it fails the test after a
// simulated day, in no time.
func (b *fakeBundle) waitEvent(t *testing.T, ok func(task.Event) bool) task.Event {
	t.Helper()
	return b.running.waitEvent(t, 24*time.Hour, ok)
}

// barrier returns once the loop has finished every iteration begun before
// it, and the fakes have done what that led them to.
func (b *fakeBundle) barrier(t *testing.T) {
	t.Helper()
	synctest.Wait()
	b.running.barrier(t)
	synctest.Wait()
}

// launch waits for the next fake session and its launch event, confirms
// it and takes its brief.
func (b *fakeBundle) launch(t *testing.T) (*workertest.Fake, task.Event) {
	t.Helper()
	a := b.agents.Next()
	launched := b.waitOnce(t, task.EvSessionLaunched, a.Params().SessionID)
	a.Confirm()
	brief := a.NextInput()
	require.Equal(t, "brief", string(brief.Kind))
	b.waitOnce(t, task.EvBriefDelivered, a.Params().SessionID)
	return a, launched
}

// waitOnce returns session's event of kind, which happens once per
// session: from the events already read (sessions launched together tell
// of themselves in any order), or the next one.
func (b *fakeBundle) waitOnce(t *testing.T, kind task.Kind, session string) task.Event {
	t.Helper()
	ok := func(e task.Event) bool { return e.Kind == kind && e.SessionID == session }
	for _, e := range b.events {
		if ok(e) {
			return e
		}
	}
	return b.waitEvent(t, ok)
}

// ledger returns the task's stored events that satisfy ok.
func (b *fakeBundle) ledger(t *testing.T, id task.ID, ok func(task.Event) bool) []task.Event {
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

// lastSession returns the task's newest stored session.
func (b *fakeBundle) lastSession(t *testing.T, id task.ID) store.Session {
	t.Helper()
	ss, err := b.st.SessionList(context.Background(), id)
	require.NoError(t, err)
	require.NotEmpty(t, ss)
	return ss[len(ss)-1]
}

// restart stops the coordinator and starts a new one on the same store,
// as a console stopped and started again does.
func (b *fakeBundle) restart(t *testing.T) {
	t.Helper()
	b.stop()
	b.run(t, b.storePath(), nil)
}

// storePath is where the bundle's store lives.
func (b *fakeBundle) storePath() string { return sqlite.DefaultPath(b.root) }

// briefedToReviewAtAttemptOne takes a's brief, finishes its phase and
// checks the task waits for review at attempt 1: nothing on the way was
// charged to it.
func (b *fakeBundle) briefedToReviewAtAttemptOne(t *testing.T, a *workertest.Fake, id task.ID) {
	t.Helper()
	brief := a.NextInput()
	require.Equal(t, "brief", string(brief.Kind))
	b.waitOnce(t, task.EvBriefDelivered, a.Params().SessionID)
	a.Finish(nil)
	last := b.waitEvent(t, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	require.Equal(t, 1, b.taskView(t, id).Task.Attempt, "the outage was charged:\n%s", b.dump())
}

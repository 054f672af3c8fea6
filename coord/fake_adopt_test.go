package coord

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
	"github.com/orchestra-tui/orchestra-tui/worker/workertest"
)

// fakeHosts serves the sessions it was told are still running, as fakes
// that have their brief already; it records what it was asked to keep.
type fakeHosts struct {
	agents *workertest.Factory
	serve  map[string]bool

	mu   sync.Mutex
	kept []string
}

func (h *fakeHosts) Adopt(ctx context.Context, s store.Session, p worker.Params) (worker.Handle, Adoption, error) {
	if !h.serve[s.ID] {
		return nil, Adoption{}, nil
	}
	w, err := h.agents.Adopt(ctx, p)
	return w, Adoption{HostPid: 1 << 23}, err
}

func (h *fakeHosts) Sweep(ctx context.Context, live func(string) bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id := range h.serve {
		if live(id) {
			h.kept = append(h.kept, id)
		}
	}
}

// crashCopy copies the store's files as they are now, as an engine killed
// at this instant leaves them, into a directory of its own, and returns
// the copy's path. The bubble is idle (synctest.Wait), so no write is half
// done.
func crashCopy(t *testing.T, path string) string {
	t.Helper()
	synctest.Wait()
	dir := t.TempDir()
	for _, suffix := range []string{"", "-wal"} {
		src, err := os.Open(path + suffix)
		if os.IsNotExist(err) && suffix != "" {
			continue
		}
		require.NoError(t, err)
		dst, err := os.OpenFile(filepath.Join(dir, filepath.Base(path)+suffix), os.O_CREATE|os.O_WRONLY, 0o600)
		require.NoError(t, err)
		_, err = io.Copy(dst, src)
		require.NoError(t, err)
		require.NoError(t, src.Close())
		require.NoError(t, dst.Close())
	}
	return filepath.Join(dir, filepath.Base(path))
}

// An engine killed mid-phase leaves its session running in a host; the
// next engine takes it up: same session and token, no requeue, no attempt
// charged, and the lease goes on from where it was, decided on the next
// tick: the window opens at 15 minutes after the launch, not after the
// restart, and the agent's progress since renews it then.
func TestFakeAdoptedSessionKeepsItsLease(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		first, launched := b.launch(t)
		time.Sleep(5 * time.Minute)
		copied := crashCopy(t, sqlite.DefaultPath(b.root))
		b.stop() // this engine's own stop is lost with it: the copy is what the next engine finds

		hosts := &fakeHosts{agents: b.agents, serve: map[string]bool{launched.SessionID: true}}
		b.run(t, copied, hosts)
		adopted := b.waitOnce(t, task.EvSessionAdopted, launched.SessionID)
		require.Equal(t, 5*time.Minute, adopted.At.Sub(launched.At))
		again := b.agents.Next()
		require.Equal(t, launched.SessionID, again.Params().SessionID)
		require.Equal(t, first.Params().Token, again.Params().Token, "the same fencing token")
		b.barrier(t)
		require.Equal(t, []string{launched.SessionID}, hosts.kept, "the sweep keeps the session taken up")
		tv := b.taskView(t, id)
		require.Equal(t, 1, tv.Task.Attempt, "no attempt charged")
		require.Equal(t, task.StateRunning, tv.Task.State)
		require.Equal(t, launched.SessionID, tv.SessionID)

		time.Sleep(5 * time.Minute)
		again.Work("● Update(calc.go)")
		renewed := b.waitEvent(t, kindIs(task.EvLeaseRenewed))
		require.Equal(t, 15*time.Minute, renewed.At.Sub(launched.At), b.dump())
		require.Equal(t, launched.SessionID, renewed.SessionID)
		again.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
		for _, e := range b.events {
			require.NotEqual(t, task.EvTaskRequeued, e.Kind, "taken up, never requeued:\n%s", b.dump())
		}
		tk, err := b.st.TaskGet(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, 1, tk.Attempt)
		ss, err := b.st.SessionList(context.Background(), id)
		require.NoError(t, err)
		require.Len(t, ss, 1, "one session, taken up, not relaunched")
	})
}

// A session whose host is gone with the machine is not taken up: its task
// is requeued as before, with the attempt given back.
func TestFakeSessionWithNoHostIsRequeued(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		_, launched := b.launch(t)
		copied := crashCopy(t, sqlite.DefaultPath(b.root))
		b.stop()

		b.run(t, copied, &fakeHosts{agents: b.agents, serve: map[string]bool{}})
		orphaned := b.waitEvent(t, refusalOf(task.ReasonLeaseOrphaned))
		require.Contains(t, orphaned.Text, "is not counted")
		relaunched, _ := b.launch(t)
		require.NotEqual(t, launched.SessionID, relaunched.Params().SessionID)
		require.Equal(t, 1, b.taskView(t, id).Task.Attempt, "the lost attempt was given back")
	})
}

package coord

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The store-level check at start-up: a session left recorded as running by
// a console that is gone is marked killed, so no view shows a session that
// nothing runs.
func TestFakeStartUpMarksSessionsOfGoneConsolesKilled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		b.waitOnce(t, task.EvSessionLaunched, a.Params().SessionID)
		b.stop()
		ctx := context.Background()
		// A session row left live by a console that is gone (written by
		// an older version, whose requeue did not end it in its own
		// transaction; a row's end is final, so it is a row of its own).
		s := b.lastSession(t, id)
		s.ID, s.Status, s.EndedAt = s.ID+"-left", store.SessionConfirmed, time.Time{}
		s.Holder = "console:999999999:gone"
		require.NoError(t, b.st.SessionInsert(ctx, s))
		tk, err := b.st.TaskGet(ctx, id)
		require.NoError(t, err)
		tk.State = task.StateParked
		require.NoError(t, b.st.TaskUpdate(ctx, store.TaskUpdateParams{Task: tk, ExpectState: task.StateQueued}))

		b.run(t, b.storePath(), nil)
		b.barrier(t)
		got, err := b.st.SessionGet(ctx, s.ID)
		require.NoError(t, err)
		require.Equal(t, store.SessionKilled, got.Status)
		require.NotEmpty(t, b.ledger(t, id, func(e task.Event) bool {
			return e.Kind == task.EvRefusal && strings.Contains(e.Text, "is marked killed")
		}))
	})
}

// The running check: a task left running with no session and no gate
// behind it (here written so behind the console's back, as a path that
// forgot to move its task would leave it) is requeued, not charged.
func TestFakeAStrandedTaskIsRequeued(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) { cfg.Slots = []config.Slot{{Name: "none", Harness: "shell"}} })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		b.barrier(t)
		// Leave it running with nothing behind it, as a forgetful path would.
		ctx := context.Background()
		done := make(chan struct{})
		b.c.back <- func() {
			defer close(done)
			tk := b.c.tasks[id]
			l, err := b.st.LeaseGrant(ctx, store.LeaseGrantParams{TaskID: id, Holder: b.c.holder, ExpectState: task.StateQueued,
				GrantedAt: time.Now(), Deadline: time.Now().Add(time.Hour)})
			require.NoError(t, err)
			tk.State, tk.Attempt = task.StateRunning, 1
			require.NoError(t, b.st.TaskUpdate(ctx, store.TaskUpdateParams{Task: tk, ExpectState: task.StateLeased, ExpectToken: l.Token}))
			b.c.tasks[id] = tk
		}
		<-done
		stranded := time.Now()
		ev := b.waitEvent(t, func(e task.Event) bool { return e.Kind == task.EvTaskRequeued && e.TaskID == id })
		require.Contains(t, ev.Text, "no session and no verify gate")
		require.Less(t, ev.At.Sub(stranded), time.Minute, "found on a tick, not after a lease")
		got, err := b.st.TaskGet(ctx, id)
		require.NoError(t, err)
		require.Equal(t, task.StateQueued, got.State)
		require.Equal(t, 0, got.Attempt, "the console lost it, not the agent: no attempt is charged")
		_, err = b.st.LeaseGet(ctx, id)
		require.ErrorIs(t, err, store.ErrNotFound)
	})
}

// A console killed without shutdown leaves its lease behind. The next
// instance expires it and requeues the task exactly once; the task then
// runs to green, and a third instance finds nothing to do.
func TestFakeRestartExpiresOrphanedLeaseOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		b.stop()

		// What a killed console leaves: a running task, its lease held by
		// an instance that is gone, and a session that looks live.
		ctx := context.Background()
		now := time.Now()
		r, err := repo.Open(b.root)
		require.NoError(t, err)
		tk, err := Prepare(task.Task{Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance,
			Verify: "true", Harness: fakeHarness, Pipeline: task.Pipeline{task.PhaseImplement}}, r, now)
		require.NoError(t, err)
		require.NoError(t, b.st.TaskInsert(ctx, signedTask(t, tk)))
		dead := fmt.Sprintf("console:%d:OLDINSTANCE", os.Getpid())
		l, err := b.st.LeaseGrant(ctx, store.LeaseGrantParams{TaskID: tk.ID, Holder: dead, ExpectState: task.StateQueued,
			GrantedAt: now, Deadline: now.Add(20 * time.Minute), Baseline: lease.Progress{At: now}})
		require.NoError(t, err)
		running := tk
		running.State, running.Attempt = task.StateRunning, 1
		require.NoError(t, b.st.TaskUpdate(ctx, store.TaskUpdateParams{Task: running, ExpectState: task.StateLeased, ExpectToken: l.Token}))
		old := store.Session{ID: task.NewULID(now), TaskID: tk.ID, Phase: task.PhaseImplement, Attempt: 1, Harness: fakeHarness,
			Token: l.Token, Holder: dead, Status: store.SessionConfirmed, StartedAt: now}
		require.NoError(t, b.st.SessionInsert(ctx, old))

		b.run(t, b.storePath(), nil)
		orphaned := b.waitEvent(t, refusalOf(task.ReasonLeaseOrphaned))
		require.Equal(t, tk.ID, orphaned.TaskID)
		require.Equal(t, now, orphaned.At, "expired at start-up, not at the dead lease's deadline")
		require.Contains(t, orphaned.Text, fmt.Sprintf("The engine pid %d is gone.", os.Getpid()))
		require.Contains(t, orphaned.Text, "Attempt 1 of phase implement is not counted")
		leased := b.waitEvent(t, kindIs(task.EvTaskLeased))
		require.Contains(t, leased.Text, "attempt 1", "the orphaned attempt is not charged: the console died, not the agent")
		a, _ := b.launch(t)
		a.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
		s, err := b.st.SessionGet(ctx, old.ID)
		require.NoError(t, err)
		require.Equal(t, store.SessionKilled, s.Status, "the dead console's session no longer looks live")
		require.Len(t, b.ledger(t, tk.ID, refusalOf(task.ReasonLeaseOrphaned)), 1)

		b.restart(t)
		b.barrier(t)
		require.Len(t, b.ledger(t, tk.ID, refusalOf(task.ReasonLeaseOrphaned)), 1, "the third start found nothing to do")
		got, err := b.st.TaskGet(ctx, tk.ID)
		require.NoError(t, err)
		require.Equal(t, task.StateAwaitingReview, got.State)
		leases, err := b.st.LeaseList(ctx)
		require.NoError(t, err)
		require.Empty(t, leases)
	})
}

package coord

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A session that does nothing after its brief keeps its lease for exactly
// the lease's length: refused renewal when the window opens (at 15 of 20
// minutes), expired at 20, stopped, its attempt counted; the next attempt
// starts and finishes.
func TestFakeLeaseExpiresAfterExactlyItsLength(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, launched := b.launch(t)

		refused := b.waitEvent(t, refusalOf(task.ReasonRenewalNoProgress))
		require.Equal(t, 15*time.Minute, refused.At.Sub(launched.At), b.dump())
		expired := b.waitEvent(t, kindIs(task.EvLeaseExpired))
		require.Equal(t, 20*time.Minute, expired.At.Sub(launched.At), b.dump())
		require.Equal(t, launched.SessionID, expired.SessionID)
		<-a.Done()
		require.Equal(t, []time.Duration{10 * time.Second}, a.Stops(), "stopped once, with the coordinator's grace")
		requeued := b.waitEvent(t, kindIs(task.EvTaskRequeued))
		require.Equal(t, task.ReasonLeaseExpired, requeued.Reason)

		second, _ := b.launch(t)
		require.NotEqual(t, a.Params().SessionID, second.Params().SessionID)
		require.Equal(t, 2, b.taskView(t, id).Task.Attempt, "the expired attempt counts")
		second.Work("editing calc.go")
		second.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	})
}

// Progress renews the lease when the window opens, from the renewal's
// start, every time; a session that then goes still expires a whole lease
// after its last renewal.
func TestFakeLeaseRenewsOnProgress(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		b.add(t, task.Pipeline{task.PhaseImplement})
		a, launched := b.launch(t)

		// The agent draws every four minutes for 44 minutes, then stops.
		go func() {
			for i := 1; i <= 11; i++ {
				time.Sleep(4 * time.Minute)
				a.Work(fmt.Sprintf("step %d", i))
			}
		}()
		for _, at := range []time.Duration{15 * time.Minute, 30 * time.Minute, 45 * time.Minute} {
			renewed := b.waitEvent(t, kindIs(task.EvLeaseRenewed))
			require.Equal(t, at, renewed.At.Sub(launched.At), b.dump())
		}
		// The last draw (44 min) is in the 45-minute renewal's baseline.
		refused := b.waitEvent(t, refusalOf(task.ReasonRenewalNoProgress))
		require.Equal(t, 60*time.Minute, refused.At.Sub(launched.At), b.dump())
		expired := b.waitEvent(t, kindIs(task.EvLeaseExpired))
		require.Equal(t, 65*time.Minute, expired.At.Sub(launched.At), b.dump())
		require.Contains(t, expired.Text, "after 3 renewal(s)")
	})
}

// An operator's extend moves the deadline by exactly the extension: the
// window and the expiry follow it.
func TestFakeExtendMovesTheDeadline(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		_, launched := b.launch(t)

		time.Sleep(10 * time.Minute)
		res, err := b.c.Do(context.Background(), Command{Kind: CmdExtend, TaskID: id, Duration: 30 * time.Minute, Author: "ana"})
		require.NoError(t, err)
		require.Equal(t, "lease extended by 30m0s", res.Message)
		ext := b.waitEvent(t, kindIs(task.EvLeaseExtended))
		require.Equal(t, 10*time.Minute, ext.At.Sub(launched.At))

		refused := b.waitEvent(t, refusalOf(task.ReasonRenewalNoProgress))
		require.Equal(t, 45*time.Minute, refused.At.Sub(launched.At), b.dump())
		expired := b.waitEvent(t, kindIs(task.EvLeaseExpired))
		require.Equal(t, 50*time.Minute, expired.At.Sub(launched.At), b.dump())
	})
}

// A still pane is flagged stuck exactly StuckAfter after its brief (the
// wait for the brief is the console's, not the agent's); the flag shows in
// the snapshot and clears when the agent draws; still again, it is flagged
// StuckAfter after that draw, and the operator's resubmit reaches the pane.
func TestFakeStuckAfterExactlyStuckAfter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) { cfg.Stuck.After.Duration = 3 * time.Minute })
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a := b.agents.Next()
		b.waitEvent(t, kindIs(task.EvSessionLaunched))
		time.Sleep(10 * time.Minute) // no brief yet: never stuck
		a.Confirm()
		a.NextInput()
		briefed := b.waitEvent(t, kindIs(task.EvBriefDelivered))

		stuck := b.waitEvent(t, refusalOf(task.ReasonStuck))
		require.Equal(t, 3*time.Minute, stuck.At.Sub(briefed.At), b.dump())
		require.Contains(t, stuck.Text, "for 3m0s")
		require.True(t, b.taskView(t, id).Stuck)
		require.Equal(t, "stuck", b.taskView(t, id).Flag)

		time.Sleep(time.Minute)
		a.Work("thinking again")
		b.barrier(t)
		require.False(t, b.taskView(t, id).Stuck, "drawing again clears the flag")
		drew := time.Now()

		again := b.waitEvent(t, refusalOf(task.ReasonStuck))
		require.Equal(t, 3*time.Minute, again.At.Sub(drew), b.dump())
		res, err := b.c.Do(context.Background(), Command{Kind: CmdResubmit, TaskID: id, Author: "ana"})
		require.NoError(t, err)
		require.Equal(t, a.Params().SessionID, res.SessionID)
		require.Equal(t, "resubmit", string(a.NextInput().Kind))
		require.False(t, b.taskView(t, id).Stuck)
	})
}

// An agent that exits mid-phase is a crash: the exit and its reason are
// recorded, a dead end too, and the next attempt starts at once.
func TestFakeExitMidPhaseRequeuesCounted(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, launched := b.launch(t)
		time.Sleep(7 * time.Minute)
		a.Exit(2, task.Refuse(task.ReasonSessionExited, "The agent exited with code 2 without writing %s.", task.SentinelPath))
		exited := b.waitEvent(t, kindIs(task.EvSessionExited))
		require.Equal(t, 7*time.Minute, exited.At.Sub(launched.At))
		require.Contains(t, exited.Text, " exited (exit 2): ", "the agent's own exit says its code")
		require.NotContains(t, exited.Text, "stopped", "the engine stopped nothing")
		b.waitEvent(t, kindIs(task.EvDeadEnd))
		b.waitEvent(t, kindIs(task.EvTaskRequeued))
		second, relaunched := b.launch(t)
		require.Equal(t, 7*time.Minute, relaunched.At.Sub(launched.At), "relaunched at once")
		require.Equal(t, 2, b.taskView(t, id).Task.Attempt)
		require.Empty(t, second.Stops())
		require.Empty(t, a.Stops(), "an exited agent is not stopped again")
	})
}

// Renewals stop at the cap however busy the agent is: refused with the
// cap's reason when the window after the last one opens, expired at that
// lease's end.
func TestFakeRenewalCapEndsABusySession(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) { cfg.Lease.MaxRenewals = 2 })
		b.add(t, task.Pipeline{task.PhaseImplement})
		a, launched := b.launch(t)
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				case <-time.After(time.Minute):
					a.Work(fmt.Sprintf("step %d", i))
				}
			}
		}()
		for _, at := range []time.Duration{15 * time.Minute, 30 * time.Minute} {
			renewed := b.waitEvent(t, kindIs(task.EvLeaseRenewed))
			require.Equal(t, at, renewed.At.Sub(launched.At), b.dump())
		}
		capped := b.waitEvent(t, refusalOf(task.ReasonRenewalCap))
		require.Equal(t, 45*time.Minute, capped.At.Sub(launched.At), b.dump())
		expired := b.waitEvent(t, kindIs(task.EvLeaseExpired))
		require.Equal(t, 50*time.Minute, expired.At.Sub(launched.At), b.dump())
	})
}

// A task whose every attempt sits still fails after its last attempt's
// lease, three leases after the first launch, with the reason.
func TestFakeAttemptsRunOutAfterThreeLeases(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		_, first := b.launch(t)
		for range 2 {
			b.launch(t)
		}
		failed := b.waitEvent(t, kindIs(task.EvTaskFailed))
		require.Equal(t, 60*time.Minute, failed.At.Sub(first.At), b.dump())
		require.Equal(t, task.ReasonAttemptsExhausted, failed.Reason)
		require.Len(t, b.agents.All(), 3)
		tk, err := b.st.TaskGet(context.Background(), id)
		require.NoError(t, err)
		require.Equal(t, task.StateFailed, tk.State)
		require.Equal(t, 3, tk.Attempt)
	})
}

// The snapshot's lease clocks are computed when it is read, from the
// session's launch: seven minutes in, 13 remain and the window opens in 8.
// A pane that drew then froze is renewed once when the window opens, and
// its time since progress keeps growing after the renewal.
func TestFakeSnapshotLeaseClocks(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, launched := b.launch(t)
		time.Sleep(7 * time.Minute)
		lv := b.taskView(t, id).Lease
		require.NotNil(t, lv)
		require.Equal(t, 13*time.Minute, lv.Remaining)
		require.Equal(t, 8*time.Minute, lv.WindowOpensIn)
		require.Equal(t, 7*time.Minute, lv.SinceProgress)
		require.Equal(t, b.c.Holder(), lv.Holder)

		// The pane draws once, then freezes: renewed once when the window
		// opens, a full length from the renewal, and still not busy.
		a.Work("● Update(calc.go)")
		renewed := b.waitEvent(t, kindIs(task.EvLeaseRenewed))
		require.Equal(t, id, renewed.TaskID)
		require.Equal(t, 15*time.Minute, renewed.At.Sub(launched.At))
		b.barrier(t)
		lv = b.taskView(t, id).Lease
		require.Equal(t, 1, lv.Renewals)
		require.Equal(t, "renew", lv.LastDecision)
		require.Equal(t, 20*time.Minute, lv.Remaining, "a renewal runs a full length from its start")
		require.Equal(t, 8*time.Minute, lv.SinceProgress, "a frozen pane does not look busy after a renewal")
	})
}

package coord

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// A session that shows its provider's usage limit waits for the reset: the
// task is flagged with the limit and the reset, its lease is held however
// long the wait (three lease lengths here), no attempt is charged, another
// task of the same harness does not start meanwhile, and at the reset
// "continue" is typed into the same session, which then finishes the task.
func TestFakeLimitWaitsForTheResetAndChargesNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) {
			h := cfg.Harness[fakeHarness]
			h.Capacity = 2
			cfg.Harness[fakeHarness] = h
		})
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		a.Work("reading calc.go")
		reset := time.Now().Add(3 * b.cfg.Lease.Length.Duration).Truncate(time.Second)
		a.Limited(session.Limit{Kind: session.LimitUsage, Text: "You’ve hit your usage limit. Try again at 5:13 AM.", Reset: reset})
		ev := b.waitEvent(t, kindIs(task.EvSessionLimited))
		require.Equal(t, task.ReasonProviderLimit, ev.Reason)
		require.Contains(t, ev.Text, "resets "+reset.Format(time.TimeOnly))
		require.Contains(t, ev.Text, "You’ve hit your usage limit")
		b.barrier(t)
		tv := b.taskView(t, id)
		require.True(t, strings.HasPrefix(tv.Flag, FlagLimited), tv.Flag)
		require.Equal(t, reset, tv.LimitReset)

		// Another task of the harness waits for the reset too.
		other := b.add(t, task.Pipeline{task.PhaseImplement})
		time.Sleep(time.Until(reset) - time.Second)
		b.barrier(t)
		require.Len(t, b.agents.All(), 1, "no new session of the limited harness started")
		require.True(t, strings.HasPrefix(b.taskView(t, other).Flag, FlagLimited), b.taskView(t, other).Flag)
		tv = b.taskView(t, id)
		require.Equal(t, 1, tv.Task.Attempt)
		require.Equal(t, task.StateRunning, tv.Task.State)
		for _, e := range b.events {
			require.NotEqual(t, task.EvLeaseExpired, e.Kind, b.dump())
			require.NotEqual(t, task.EvTaskRequeued, e.Kind, b.dump())
		}
		// Still: not stuck however long the screen stood.
		require.False(t, tv.Stuck)

		time.Sleep(2 * time.Second)
		in := a.NextInput()
		require.Equal(t, worker.InputContinue, in.Kind)
		require.Equal(t, "continue", in.Text)
		b.waitEvent(t, kindIs(task.EvSessionLimitReset))
		b.barrier(t)
		require.Empty(t, b.taskView(t, id).Flag)
		a.Work("editing calc.go")
		a.Finish(nil)
		b.waitEvent(t, func(e task.Event) bool { return e.TaskID == id && ended(e) })
		require.Equal(t, 1, b.taskView(t, id).Task.Attempt, "the limit cost no attempt")
		// The other task starts once the reset has passed.
		b.waitOnce(t, task.EvSessionLaunched, b.agents.All()[1].Params().SessionID)
	})
}

// A session that quits at its limit is relaunched after the reset with no
// attempt charged.
func TestFakeLimitExitRelaunchesAfterTheReset(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		reset := time.Now().Add(10 * time.Minute)
		a.Limited(session.Limit{Kind: session.LimitRate, Text: "API Error: 429", Reset: reset})
		b.waitEvent(t, kindIs(task.EvSessionLimited))
		a.Exit(1, nil)
		rq := b.waitEvent(t, kindIs(task.EvTaskRequeued))
		require.Equal(t, task.ReasonProviderLimit, rq.Reason)
		b.barrier(t)
		require.Equal(t, 0, b.taskView(t, id).Task.Attempt, "the attempt is given back")
		require.Len(t, b.agents.All(), 1, "no relaunch before the reset")
		a2 := b.agents.Next()
		require.False(t, time.Now().Before(reset), "relaunched at %s, before the reset %s", time.Now(), reset)
		b.waitOnce(t, task.EvSessionLaunched, a2.Params().SessionID)
		a2.Confirm()
		require.Equal(t, "brief", string(a2.NextInput().Kind))
		a2.Finish(nil)
		require.Equal(t, task.EvTaskAwaiting, b.waitEvent(t, ended).Kind, b.dump())
		require.Equal(t, 1, b.taskView(t, id).Task.Attempt)
	})
}

// An overload holds the session, not flagged stuck however long its
// screen stands, and "continue" is typed at the end of the wait.
func TestFakeOverloadIsNotStuck(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) {
			cfg.Stuck.After.Duration = time.Minute
		})
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		a.Limited(session.Limit{Kind: session.LimitOverloaded, Text: "API Error: 529 overloaded", Reset: time.Now().Add(3 * time.Minute)})
		b.waitEvent(t, kindIs(task.EvSessionLimited))
		time.Sleep(2 * time.Minute)
		b.barrier(t)
		tv := b.taskView(t, id)
		require.False(t, tv.Stuck, b.dump())
		for _, e := range b.events {
			require.False(t, e.Kind == task.EvRefusal && e.Reason == task.ReasonStuck, b.dump())
		}
		time.Sleep(2 * time.Minute)
		b.waitEvent(t, kindIs(task.EvSessionLimitReset))
		require.Equal(t, worker.InputContinue, a.NextInput().Kind)
		a.Work("the retry answered")
		a.Finish(nil)
		require.Equal(t, task.EvTaskAwaiting, b.waitEvent(t, ended).Kind, b.dump())
	})
}

// A CLI that retries by itself on its own backoff and names no reset
// (opencode's "[retrying in 32s attempt #5]") waits as long as its limit
// message shows, past limits.limit_wait: never stuck, its lease held,
// nothing typed, no countdown to a guess. Once the message is gone the
// session goes on, still with nothing typed, and no attempt is charged.
func TestFakeRetryingLimitWaitsWhileItShows(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) {
			cfg.Stuck.After.Duration = time.Minute
			cfg.Lease.Length.Duration, cfg.Lease.Window.Duration = 2*time.Minute, time.Minute
			cfg.Limits.LimitWait.Duration = 5 * time.Minute
		})
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		a.Limited(session.Limit{Kind: session.LimitUsage, Text: "You exceeded your current quota [retrying in 4s", Retrying: true})
		limited := b.waitEvent(t, kindIs(task.EvSessionLimited))
		require.Contains(t, limited.Text, "the CLI retries by itself")
		time.Sleep(20 * time.Minute)
		b.barrier(t)
		tv := b.taskView(t, id)
		require.True(t, strings.HasPrefix(tv.Flag, FlagLimited), tv.Flag)
		require.Contains(t, tv.Flag, "the CLI retries by itself")
		require.True(t, tv.LimitReset.IsZero(), "no countdown to a guess")
		require.Len(t, a.Typed(), 1, "only the brief was typed: %v", a.Typed())
		for _, e := range b.events {
			require.NotEqual(t, task.EvSessionLimitReset, e.Kind, "the wait ended while the CLI still retried:\n%s", b.dump())
			require.NotEqual(t, task.EvLeaseExpired, e.Kind, b.dump())
			require.False(t, e.Kind == task.EvRefusal && e.Reason == task.ReasonStuck, b.dump())
		}
		a.LimitGone()
		gone := b.waitEvent(t, kindIs(task.EvSessionLimitReset))
		require.Contains(t, gone.Text, "retries by itself")
		b.barrier(t)
		require.Empty(t, b.taskView(t, id).Flag)
		a.Work("the retry answered")
		a.Finish(nil)
		require.Equal(t, task.EvTaskAwaiting, b.waitEvent(t, ended).Kind, b.dump())
		require.Len(t, a.Typed(), 1, "nothing typed after the limit: %v", a.Typed())
		require.Equal(t, 1, b.taskView(t, id).Task.Attempt)
	})
}

// With [limits] on_limit = "handoff:HARNESS" a limited task moves to that
// harness at once: the session is stopped, the task requeued on the other
// harness in one transition that signs it again (it then launches there,
// which a bad signature would refuse), and no attempt is charged.
func TestFakeLimitHandsOffToAnotherHarness(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) {
			cfg.Harness["other"] = session.Spec{Name: "other", Argv: []string{"true"}, Delivery: session.DeliveryType, Resubmit: session.ResubmitSubmit}
			cfg.Limits.OnLimit = "handoff:other"
		})
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		a.Work("half the fix")
		a.Limited(session.Limit{Kind: session.LimitUsage, Text: "usage limit reached", Reset: time.Now().Add(time.Hour)})
		rq := b.waitEvent(t, kindIs(task.EvTaskRequeued))
		require.Equal(t, task.ReasonProviderLimit, rq.Reason)
		require.Contains(t, rq.Text, "harness other")
		a2 := b.agents.Next()
		require.Equal(t, "true", a2.Params().Spec.Argv[0])
		b.waitOnce(t, task.EvSessionLaunched, a2.Params().SessionID)
		a2.Confirm()
		br := a2.NextInput()
		require.Equal(t, "brief", string(br.Kind))
		require.Contains(t, br.Text, "half the fix", "the continuity of the limited session is in the brief")
		a2.Finish(nil)
		require.Equal(t, task.EvTaskAwaiting, b.waitEvent(t, ended).Kind, b.dump())
		tv := b.taskView(t, id)
		require.Equal(t, "other", tv.Task.Harness)
		require.Equal(t, 1, tv.Task.Attempt)
	})
}

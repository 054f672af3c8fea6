package coord

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A pane that stops making progress loses its lease: the session is
// stopped, the task relaunched with a brief whose continuity and dead-end
// sections name what the first attempt did, and the second attempt goes
// green.
func TestStalledSessionLosesLeaseAndRelaunchesWithContinuity(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {
			{Attempt: 1, Behave: agent.BehaveStall, Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcHalf}}},
			{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}},
		},
	}}, shortLease)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	ctx := context.Background()

	launched := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	pid := launchedPid(t, launched)
	// The lease's clock and baseline start at the launch, not at the grant
	// (before the worktree and the baseline verify).
	l, err := b.st.LeaseGet(ctx, id)
	require.NoError(t, err)
	require.NotEmpty(t, l.Baseline.Screen, "the first renewal needs progress beyond the screen at launch")
	// (The grant came a worktree and a baseline verify earlier: seconds.)
	require.WithinDuration(t, launched.At.Add(b.cfg.Lease.Length.Duration), l.Deadline, 500*time.Millisecond)

	expired := b.waitEvent(t, 30*time.Second, kindIs(task.EvLeaseExpired))
	require.Equal(t, task.ReasonLeaseExpired, expired.Reason)
	require.Equal(t, launched.SessionID, expired.SessionID)
	exited := b.waitEvent(t, 10*time.Second, kindIs(task.EvSessionExited))
	require.Equal(t, launched.SessionID, exited.SessionID)
	require.ErrorIs(t, syscall.Kill(-pid, 0), syscall.ESRCH, "the expired session's process group is gone")
	requeued := b.waitEvent(t, 10*time.Second, kindIs(task.EvTaskRequeued))
	require.Equal(t, task.ReasonLeaseExpired, requeued.Reason)
	// The second attempt is meant to succeed: the operator gives it room,
	// so a go test compiling on a loaded machine (a still screen for
	// longer than the 3s lease) does not expire it too. The exact lease
	// clock is TestFakeLeaseExpiresAfterExactlyItsLength's.
	relaunched := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	require.NotEqual(t, launched.SessionID, relaunched.SessionID)
	_, err = b.c.Do(ctx, Command{Kind: CmdExtend, TaskID: id, Duration: 10 * time.Minute})
	require.NoError(t, err)

	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())

	// The first attempt was renewed while it drew, then refused once it
	// sat still, and only then expired.
	var renewed, refused bool
	for _, e := range b.events {
		if e.SessionID != launched.SessionID {
			continue
		}
		renewed = renewed || e.Kind == task.EvLeaseRenewed
		refused = refused || (e.Kind == task.EvRefusal && e.Reason == task.ReasonRenewalNoProgress)
	}
	require.True(t, renewed, "a session drawing output is renewed:\n%s", b.dump())
	require.True(t, refused, "a still session is refused before it expires:\n%s", b.dump())

	brief := b.recordedBrief(task.PhaseImplement, 2, 1)
	require.NotEmpty(t, brief, "the agent recorded the second attempt's brief")
	cont := section(t, brief, task.HeadingContinuity, task.HeadingDeadEnds)
	require.Contains(t, cont, launched.SessionID, "continuity names the previous session")
	require.Contains(t, cont, "attempt 1")
	require.Contains(t, cont, "calc.go", "continuity names the file the first attempt changed")
	require.Contains(t, cont, task.ReasonLeaseExpired.Sentence())
	require.Contains(t, cont, "Thinking…", "continuity carries the last screen")
	dead := brief[strings.Index(brief, task.HeadingDeadEnds):]
	require.Contains(t, dead, "implement, attempt 1: Attempt 1 of implement made no progress and lost its lease")

	tk, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 2, tk.Attempt)
	require.Contains(t, gitShow(t, b.root, tk.Branch, "calc.go"), "return a * b }")
}

// section returns the text of a brief from heading up to the next one.
func section(t testing.TB, brief, heading, next string) string {
	t.Helper()
	i := strings.Index(brief, heading)
	require.GreaterOrEqual(t, i, 0, "brief has no %q:\n%s", heading, brief)
	j := strings.Index(brief[i:], next)
	require.Greater(t, j, 0, "brief has no %q after %q:\n%s", next, heading, brief)
	return brief[i : i+j]
}

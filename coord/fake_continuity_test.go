package coord

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
	"github.com/orchestra-tui/orchestra-tui/worker/workertest"
)

// edit writes content to rel in a's worktree, as the agent's edit.
func edit(t *testing.T, a *workertest.Fake, rel, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(a.Params().Dir, rel), []byte(content), 0o644))
}

// briefOf returns the brief typed into a's pane.
func briefOf(t *testing.T, a *workertest.Fake) string {
	t.Helper()
	for _, in := range a.Typed() {
		if in.Kind == worker.InputBrief {
			return in.Text
		}
	}
	t.Fatalf("session %s got no brief", a.Params().SessionID)
	return ""
}

// A pane that stops making progress loses its lease: renewed while it drew,
// refused once it sat still, expired at the end of the lease it could not
// renew; the session is stopped, the task relaunched with a brief whose
// continuity and dead-end sections name what the first attempt did, and
// the second attempt goes green.
func TestFakeStalledSessionLosesLeaseAndRelaunchesWithContinuity(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		length, window := b.cfg.Lease.Length.Duration, b.cfg.Lease.Window.Duration
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		ctx := context.Background()
		a, launched := b.launch(t)
		// The lease's clock and baseline start at the launch, not at the
		// grant (before the worktree and the baseline verify).
		l, err := b.st.LeaseGet(ctx, id)
		require.NoError(t, err)
		require.NotEmpty(t, l.Baseline.Screen, "the first renewal needs progress beyond the screen at launch")
		require.Equal(t, length, l.Deadline.Sub(launched.At))

		// Half a fix, a spinner, then nothing.
		edit(t, a, "calc.go", project.CalcHalf)
		a.Work("✻ Thinking…")
		renewed := b.waitEvent(t, kindIs(task.EvLeaseRenewed))
		require.Equal(t, length-window, renewed.At.Sub(launched.At), b.dump())
		refused := b.waitEvent(t, refusalOf(task.ReasonRenewalNoProgress))
		require.Equal(t, 2*(length-window), refused.At.Sub(launched.At), b.dump())
		expired := b.waitEvent(t, kindIs(task.EvLeaseExpired))
		require.Equal(t, task.ReasonLeaseExpired, expired.Reason)
		require.Equal(t, launched.SessionID, expired.SessionID)
		require.Equal(t, length-window+length, expired.At.Sub(launched.At), b.dump())
		exited := b.waitEvent(t, kindIs(task.EvSessionExited))
		require.Equal(t, launched.SessionID, exited.SessionID)
		require.Contains(t, exited.Text, " was stopped by the engine (SIGTERM, exit 143): ", "the lease's end stopped it, not the agent")
		<-a.Done()
		require.Equal(t, []time.Duration{10 * time.Second}, a.Stops(), "the expired session was stopped")
		requeued := b.waitEvent(t, kindIs(task.EvTaskRequeued))
		require.Equal(t, task.ReasonLeaseExpired, requeued.Reason)

		second, relaunched := b.launch(t)
		require.NotEqual(t, launched.SessionID, relaunched.SessionID)
		brief := briefOf(t, second)
		cont := section(t, brief, task.HeadingContinuity, task.HeadingDeadEnds)
		require.Contains(t, cont, launched.SessionID, "continuity names the previous session")
		require.Contains(t, cont, "attempt 1")
		require.Contains(t, cont, "calc.go", "continuity names the file the first attempt changed")
		require.Contains(t, cont, task.ReasonLeaseExpired.Sentence())
		require.Contains(t, cont, "Thinking…", "continuity carries the last screen")
		dead := brief[strings.Index(brief, task.HeadingDeadEnds):]
		require.Contains(t, dead, "implement, attempt 1: Attempt 1 of implement made no progress and lost its lease")

		edit(t, second, "calc.go", project.CalcFixed)
		second.Work("● Update(calc.go)")
		second.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
		tk, err := b.st.TaskGet(ctx, id)
		require.NoError(t, err)
		require.Equal(t, 2, tk.Attempt)
		require.Contains(t, gitShow(t, b.root, tk.Branch, "calc.go"), "return a * b }")
	})
}

// An agent that dies mid-phase does not finish the phase: the exit is a
// refusal with its code, a dead end the next brief names, nothing is
// sealed, the session is recorded exited with its code and continuity,
// and the task is relaunched; the second attempt goes green.
func TestFakeCrashMidPhaseRequeuesAndRetries(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		ctx := context.Background()
		a, launched := b.launch(t)
		a.Work("● Update(calc.go)")
		const code = 3
		a.Exit(code, task.Refuse(task.ReasonSessionExited, "The agent exited with code %d without writing %s, and left no %s.",
			code, task.SentinelPath, task.ArtifactPath(task.PhaseImplement)))
		crash := b.waitEvent(t, refusalOf(task.ReasonSessionExited))
		require.Contains(t, crash.Text, "exited with code 3", b.dump())
		requeued := b.waitEvent(t, kindIs(task.EvTaskRequeued))
		require.Equal(t, task.ReasonSessionExited, requeued.Reason)
		arts, err := b.st.ArtifactList(ctx, id)
		require.NoError(t, err)
		require.Empty(t, arts, "a crashed attempt sealed nothing")
		s, err := b.st.SessionGet(ctx, launched.SessionID)
		require.NoError(t, err)
		require.Equal(t, store.SessionExited, s.Status)
		require.Equal(t, code, s.ExitCode)
		require.NotEmpty(t, s.Continuity, "the crash left a continuity record")

		second, relaunched := b.launch(t)
		require.NotEqual(t, launched.SessionID, relaunched.SessionID)
		require.NotEqual(t, a.Pid(), second.Pid())
		second.Finish(nil)
		last := b.waitEvent(t, ended)
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
		tk, err := b.st.TaskGet(ctx, id)
		require.NoError(t, err)
		require.Equal(t, task.StateAwaitingReview, tk.State)
		require.Equal(t, 2, tk.Attempt, "the second attempt finished it")
		deadEnds, err := b.st.DeadEndList(ctx, id)
		require.NoError(t, err)
		require.Len(t, deadEnds, 1)
		require.Contains(t, deadEnds[0].Text, "exited with code 3")
		require.Contains(t, briefOf(t, second), deadEnds[0].Text, "the retry's brief names the crash as a dead end")
	})
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

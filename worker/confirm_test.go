package worker

import (
	"errors"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// A launch whose session says it is ready is reported confirmed, once,
// stamped with the assignment.
func TestConfirmReportsConfirmedOnceReady(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sr := startStub(t, nil)
		synctest.Wait()
		require.Empty(t, sr.reports, "nothing is reported before the session is ready")
		sr.sess.ready <- nil
		rep := sr.next(t)
		require.Equal(t, Confirmed, rep.Kind)
		require.Equal(t, task.ID("T"+t.Name()), rep.TaskID)
		require.Equal(t, "S1", rep.SessionID)
		require.Equal(t, int64(7), rep.Token, "every report carries the lease token")
		require.Equal(t, task.PhaseImplement, rep.Phase)
		synctest.Wait()
		require.Empty(t, sr.reports, "confirmed once")
	})
}

// A launch that does not confirm is refused with why: the session's own
// refusal as it is, any other error as "not confirmed" with its text. A
// session that exited while launching is not refused here: its exit is
// reported, with what the agent left behind.
func TestConfirmRefusalSaysWhy(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		err    error
		reason task.Reason
		detail string
	}{
		"refusal": {task.Refuse(task.ReasonLaunchFailed, "No prompt."), task.ReasonLaunchFailed, "No prompt."},
		"error":   {errors.New("the ready marker never showed"), task.ReasonLaunchNotConfirmed, "the ready marker never showed"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sr := startStub(t, nil)
				sr.sess.ready <- c.err
				rep := sr.next(t)
				require.Equal(t, LaunchRefused, rep.Kind)
				require.NotNil(t, rep.Refusal)
				require.Equal(t, c.reason, rep.Refusal.Reason)
				require.Equal(t, c.detail, rep.Refusal.Detail)
			})
		})
	}
	t.Run("exited", func(t *testing.T) {
		t.Parallel()
		synctest.Test(t, func(t *testing.T) {
			sr := startStub(t, nil)
			sr.sess.ready <- task.Refuse(task.ReasonSessionExited, "It exited.")
			synctest.Wait()
			require.Empty(t, sr.reports, "the exit is reported by the exit's watch, not as a refused launch")
			sr.sess.end(1)
			rep := sr.next(t)
			require.Equal(t, Exited, rep.Kind)
			require.Equal(t, 1, rep.ExitCode)
			require.NotNil(t, rep.Refusal)
			require.Equal(t, task.ReasonSessionExited, rep.Refusal.Reason)
		})
	})
}

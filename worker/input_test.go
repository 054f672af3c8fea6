package worker

import (
	"strings"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Inputs sent before the brief wait for it: the brief is typed first, then
// the others in the order they were sent, each reported delivered and its
// Done told, in that order.
func TestInputsWaitForTheBriefAndKeepTheirOrder(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sr := startStub(t, nil)
		done := make(chan error, 3)
		sr.Send(Input{Kind: InputDecision, ID: "D1", Text: "first", Done: done})
		sr.Send(Input{Kind: InputRefusal, Text: "second", Done: done})
		synctest.Wait()
		require.Empty(t, sr.sess.typedAll(), "a correction never reaches the pane before the brief it corrects")

		sr.Send(Input{Kind: InputBrief, Text: "the brief", Done: done})
		require.Equal(t, []string{"deliver: the brief", "send: first", "send: second"}, sr.waitTyped(t, 3))
		for _, want := range []InputKind{InputBrief, InputDecision, InputRefusal} {
			rep := sr.next(t)
			require.Equal(t, InputDelivered, rep.Kind)
			require.Equal(t, want, rep.Input)
			require.NoError(t, <-done)
		}
	})
}

// An input the agent never visibly took is reported refused, with what the
// screen shows, and its Done gets the refusal; the next input is typed all
// the same.
func TestInputNotAcceptedIsReportedRefused(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sr := startStub(t, nil)
		sr.sess.accept = func(text string) error {
			if text == "ignored" {
				return task.Refuse(task.ReasonInputNotAccepted, "The screen still shows the text.")
			}
			return nil
		}
		sr.Send(Input{Kind: InputBrief, Text: "the brief"})
		done := make(chan error, 1)
		sr.Send(Input{Kind: InputDecision, ID: "D1", Text: "ignored", Done: done})
		sr.Send(Input{Kind: InputDecision, ID: "D2", Text: "taken"})
		require.Equal(t, InputDelivered, sr.next(t).Kind)
		rep := sr.next(t)
		require.Equal(t, InputRefused, rep.Kind)
		require.Equal(t, "D1", rep.InputID)
		require.Equal(t, task.ReasonInputNotAccepted, rep.Refusal.Reason)
		var ref *task.Refusal
		require.ErrorAs(t, <-done, &ref)
		rep = sr.next(t)
		require.Equal(t, InputDelivered, rep.Kind)
		require.Equal(t, "D2", rep.InputID)
	})
}

// A resubmit re-types what its mode says: the last text typed (the brief,
// then a later correction) for last-input and brief, a bare submit
// otherwise.
func TestResubmitRetypesTheLastInputOrSubmits(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sr := startStub(t, nil)
		sr.Send(Input{Kind: InputBrief, Text: "the brief"})
		sr.Send(Input{Kind: InputResubmit, Mode: session.ResubmitLastInput})
		sr.Send(Input{Kind: InputResubmit, Mode: session.ResubmitSubmit})
		sr.Send(Input{Kind: InputDecision, Text: "use integers"})
		sr.Send(Input{Kind: InputResubmit, Mode: session.ResubmitBrief})
		require.Equal(t, []string{
			"deliver: the brief", "deliver: the brief", "submit", "send: use integers", "deliver: use integers",
		}, sr.waitTyped(t, 5))
	})
}

// Once the agent has exited, input is refused with ErrClosed, queued or
// sent after.
func TestInputAfterTheExitIsClosed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sr := startStub(t, nil)
		queued := make(chan error, 1)
		sr.Send(Input{Kind: InputDecision, Text: "waits for a brief that never comes", Done: queued})
		sr.sess.end(0)
		_, _ = sr.nextKind(t, Exited)
		<-sr.Done()
		require.ErrorIs(t, <-queued, ErrClosed)
		late := make(chan error, 1)
		sr.Send(Input{Kind: InputBrief, Text: "too late", Done: late})
		require.ErrorIs(t, <-late, ErrClosed)
		require.Empty(t, sr.sess.typedAll())
	})
}

// A harness that takes its brief as a file never has text typed into it:
// the brief goes to the brief file and a correction to its end, each with
// a notice in the pane.
func TestFileDeliveryTypesNothing(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sr := startStub(t, func(p *Params) { p.Spec.Delivery = session.DeliveryFile })
		sr.Send(Input{Kind: InputBrief, Text: "the brief"})
		sr.Send(Input{Kind: InputDecision, Text: DecisionText("use integers")})
		sr.nextKind(t, InputDelivered)
		sr.nextKind(t, InputDelivered)
		brief, err := sr.wt.ReadFile(task.BriefPath, maxBriefFile)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(brief), "the brief\n"), string(brief))
		require.Contains(t, string(brief), task.DecisionHeader+" use integers")
		require.Empty(t, sr.sess.typedAll(), "nothing is typed into a file-delivery pane")
		sr.sess.mu.Lock()
		notices := append([]string(nil), sr.sess.notices...)
		sr.sess.mu.Unlock()
		require.Len(t, notices, 2)
		require.Contains(t, notices[1], "a human decision was added to the end of "+task.BriefPath)
	})
}

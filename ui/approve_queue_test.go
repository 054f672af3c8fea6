package ui

import (
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// With the merge queue on, the approve banner says the queue lands the
// task, not that M merges it: M is refused for a queued task.
func TestApproveBannerWithTheQueueDoesNotOfferM(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	everyState(e)
	msg := "approved and queued for merge: the queue lands it once its tests are green on the base"
	e.result = func(c coord.Command) (coord.Result, error) { return coord.Result{TaskID: c.TaskID, Message: msg}, nil }
	b := setupEngine(t, e).size(120, 40).selectState(task.StateAwaitingReview).press("a")
	v := ansi.Strip(b.view())
	require.Contains(t, v, "the merge queue lands it · esc dismisses this")
	require.NotContains(t, v, "M merges it")
}

package ui

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// listBefore is the list's order as a comparison of two views, the
// reference taskList.rebuild's sort of keys is held to.
func listBefore(a, b coord.TaskView) bool {
	ra, rb := listRank(a), listRank(b)
	if ra != rb {
		return ra < rb
	}
	if ra != 1 && !a.Task.UpdatedAt.Equal(b.Task.UpdatedAt) {
		return a.Task.UpdatedAt.After(b.Task.UpdatedAt)
	}
	return a.Task.ID < b.Task.ID
}

// The list is in listBefore's order whatever the snapshot's: tasks needing
// a human first, live ones in creation order, the rest newest first, ties
// (equal times, zero times) by id, with a filter applied.
func TestListOrderIsListBefore(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	e := newStubEngine(testNow)
	for i := range 500 {
		s := task.States[r.IntN(len(task.States))]
		tv := coord.TaskView{Task: task.Task{ID: task.ID(fmt.Sprintf("01T%05d", r.IntN(100000))), State: s,
			UpdatedAt: testNow.Add(-time.Duration(r.IntN(20)) * time.Minute)}}
		if i%17 == 0 {
			tv.Task.UpdatedAt = time.Time{}
		}
		if s.Live() && r.IntN(2) == 0 {
			tv.SessionID = "S" + string(tv.Task.ID)
		}
		if r.IntN(10) == 0 {
			tv.Flag = "stuck 45s"
		}
		e.snap.Tasks = append(e.snap.Tasks, tv)
	}
	b := setupEngine(t, e)
	for _, f := range []filter{filterAll, filterLive, filterEnded} {
		b.m.tasks.filter = f
		b.m.tasks.rebuild(b.m.now())
		var want []coord.TaskView
		for _, tv := range e.snap.Tasks {
			if f.match(tv) {
				want = append(want, tv)
			}
		}
		slices.SortStableFunc(want, func(a, b coord.TaskView) int {
			switch {
			case listBefore(a, b):
				return -1
			case listBefore(b, a):
				return 1
			}
			return 0
		})
		require.NotEmpty(t, want)
		require.Equal(t, want, b.m.tasks.visible(), "filter %v", f)
	}
}

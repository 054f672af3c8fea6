package storetest

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var taskCases = []testCase{
	{"TaskInsertGetRoundTrip", testTaskInsertGet},
	{"TaskInsertDuplicateWritesNothing", testTaskInsertDuplicate},
	{"TaskGetMissing", testTaskGetMissing},
	{"TaskListFiltersByState", testTaskList},
	{"TaskUpdateGuarded", testTaskUpdate},
	{"TaskUpdateWrongStateConflicts", testTaskUpdateWrongState},
	{"TaskUpdateWrongTokenRefused", testTaskUpdateWrongToken},
	{"TaskUpdateMissing", testTaskUpdateMissing},
	{"TaskUpdateConcurrentOneWins", testTaskUpdateConcurrent},
	{"TaskTimesComeBackUTC", testTaskTimesUTC},
	{"TaskEmptyListsRoundTrip", testTaskEmptyLists},
}

func testTaskInsertGet(t *testing.T, b *bundle) {
	tk := b.newTask()
	tk.BaseCommit, tk.Branch, tk.Reason, tk.Attempt = "abc123", "orchestra/t1", "why not", 2
	ev := b.event(tk.ID, task.EvTaskAdded)
	require.NoError(t, b.st.TaskInsert(b.ctx, tk, ev))

	got, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, tk, got)
	b.requireEvents(t, tk.ID, ev)

	token, err := b.st.TaskToken(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Zero(t, token, "a task never leased has token 0")
}

func testTaskInsertDuplicate(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	again := tk
	again.Title = "impostor"
	require.Error(t, b.st.TaskInsert(b.ctx, again, b.event(tk.ID, task.EvTaskAdded)))

	got, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, tk, got)
	b.requireEvents(t, tk.ID)
}

func testTaskGetMissing(t *testing.T, b *bundle) {
	_, err := b.st.TaskGet(b.ctx, "nope")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = b.st.TaskToken(b.ctx, "nope")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func testTaskList(t *testing.T, b *bundle) {
	all, err := b.st.TaskList(b.ctx, store.TaskListParams{})
	require.NoError(t, err)
	require.Empty(t, all)

	var want []task.Task
	for _, st := range []task.State{task.StateQueued, task.StateParked, task.StateRunning, task.StateQueued} {
		tk := b.newTask()
		tk.State = st
		require.NoError(t, b.st.TaskInsert(b.ctx, tk))
		want = append(want, tk)
	}

	all, err = b.st.TaskList(b.ctx, store.TaskListParams{})
	require.NoError(t, err)
	require.Equal(t, want, all, "all tasks, oldest first")

	queued, err := b.st.TaskList(b.ctx, store.TaskListParams{States: []task.State{task.StateQueued}})
	require.NoError(t, err)
	require.Equal(t, []task.Task{want[0], want[3]}, queued)

	two, err := b.st.TaskList(b.ctx, store.TaskListParams{States: []task.State{task.StateRunning, task.StateParked}})
	require.NoError(t, err)
	require.Equal(t, []task.Task{want[1], want[2]}, two)

	none, err := b.st.TaskList(b.ctx, store.TaskListParams{States: []task.State{task.StateCompleted}})
	require.NoError(t, err)
	require.Empty(t, none)
}

func testTaskUpdate(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	next := tk
	next.State, next.Phase, next.Attempt = task.StateParked, task.PhaseImplement, 3
	next.BaseCommit, next.Branch, next.Reason = "def456", "orchestra/x", "operator parked it"
	next.UpdatedAt = b.at(time.Hour)
	// Operator-owned fields are not the coordinator's to write.
	changed := next
	changed.Title, changed.Goal = "rewritten", "rewritten"
	ev := b.event(tk.ID, task.EvTaskParked)

	require.NoError(t, b.st.TaskUpdate(b.ctx, store.TaskUpdateParams{
		Task: changed, ExpectState: task.StateQueued, Events: []task.Event{ev},
	}))
	got, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, next, got)
	b.requireEvents(t, tk.ID, ev)
}

func testTaskUpdateWrongState(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	next := tk
	next.State, next.Reason = task.StateCompleted, "late writer"
	err := b.st.TaskUpdate(b.ctx, store.TaskUpdateParams{
		Task: next, ExpectState: task.StateRunning, Events: []task.Event{b.event(tk.ID, task.EvTaskCompleted)},
	})
	require.ErrorIs(t, err, store.ErrConflict)

	got, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, tk, got, "a refused update writes nothing")
	b.requireEvents(t, tk.ID)
}

func testTaskUpdateWrongToken(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	l, err := b.st.LeaseGrant(b.ctx, store.LeaseGrantParams{
		TaskID: tk.ID, Holder: "slot-1", ExpectState: task.StateQueued, GrantedAt: b.now, Deadline: b.at(time.Minute),
	})
	require.NoError(t, err)
	before, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)

	next := before
	next.State = task.StateRunning
	err = b.st.TaskUpdate(b.ctx, store.TaskUpdateParams{
		Task: next, ExpectState: task.StateLeased, ExpectToken: l.Token + 7,
		Events: []task.Event{b.event(tk.ID, task.EvSessionConfirmed)},
	})
	require.Error(t, err)
	require.True(t, isConflictOrStale(err), "want ErrConflict or ErrStaleToken, got %v", err)
	got, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, before, got, "a refused update writes nothing")
	b.requireEvents(t, tk.ID)

	// The right token passes.
	require.NoError(t, b.st.TaskUpdate(b.ctx, store.TaskUpdateParams{
		Task: next, ExpectState: task.StateLeased, ExpectToken: l.Token,
	}))
	got, err = b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, task.StateRunning, got.State)
}

func testTaskUpdateMissing(t *testing.T, b *bundle) {
	tk := b.newTask()
	err := b.st.TaskUpdate(b.ctx, store.TaskUpdateParams{Task: tk, ExpectState: task.StateQueued,
		Events: []task.Event{b.event(tk.ID, task.EvTaskParked)}})
	require.ErrorIs(t, err, store.ErrNotFound)
	b.requireEvents(t, tk.ID)
}

// testTaskUpdateConcurrent races guarded writes from several goroutines: the
// guard and the write must be one transaction, so exactly one wins.
func testTaskUpdateConcurrent(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	const writers = 8
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			next := tk
			next.State, next.Attempt = task.StateParked, i+1
			errs[i] = b.st.TaskUpdate(b.ctx, store.TaskUpdateParams{
				Task: next, ExpectState: task.StateQueued, Events: []task.Event{b.event(tk.ID, task.EvTaskParked)},
			})
		})
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		require.ErrorIs(t, err, store.ErrConflict)
	}
	require.Equal(t, 1, wins)
	require.Len(t, b.events(t, tk.ID), 1, "only the winner's event is in the ledger")
}

func testTaskTimesUTC(t *testing.T, b *bundle) {
	tk := b.newTask()
	zone := time.FixedZone("UTC+2", 2*60*60)
	tk.CreatedAt = time.Date(2026, 5, 6, 7, 8, 9, 123_456_789, zone)
	tk.UpdatedAt = tk.CreatedAt
	require.NoError(t, b.st.TaskInsert(b.ctx, tk))

	got, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, time.UTC, got.CreatedAt.Location())
	require.WithinDuration(t, tk.CreatedAt, got.CreatedAt, time.Millisecond)
	require.Equal(t, time.Date(2026, 5, 6, 5, 8, 9, 123_000_000, time.UTC), got.CreatedAt.Truncate(time.Millisecond))
}

func testTaskEmptyLists(t *testing.T, b *bundle) {
	tk := b.newTask()
	tk.Acceptance, tk.Capabilities, tk.Model = nil, nil, ""
	require.NoError(t, b.st.TaskInsert(b.ctx, tk))
	got, err := b.st.TaskGet(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Empty(t, got.Acceptance)
	require.Empty(t, got.Capabilities)
	require.Equal(t, tk.Pipeline, got.Pipeline)
}

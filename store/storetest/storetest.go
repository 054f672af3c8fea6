// Package storetest is the conformance suite every store driver runs. A
// driver's test calls Run with a function that opens a fresh, empty store;
// the suite pins the behaviour the coordinator relies on: guarded writes,
// fencing tokens, events written in the same transaction as the change they
// describe, and faithful round trips.
package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Run runs the conformance suite. open must return a new, empty store for
// each call and arrange for it to be closed when t ends; subtests run in
// parallel, each on its own store.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	groups := [][]testCase{taskCases, eventCases, recordCases, leaseCases, claimCases, transitionCases, importCases, baseCases, listenCases, usageCases, engineCases, fenceCases, cursorCases}
	for _, group := range groups {
		for _, tc := range group {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				tc.run(t, setup(t, open))
			})
		}
	}
}

// testCase is one conformance check.
type testCase struct {
	name string
	run  func(t *testing.T, b *bundle)
}

// bundle is what every check starts from.
type bundle struct {
	ctx context.Context
	st  store.Store
	// now is a fixed UTC instant at millisecond precision, the precision
	// every driver must keep, so whole structs compare with require.Equal.
	now time.Time
	seq atomic.Int64 // makes fixture ids unique within the store
}

func setup(t *testing.T, open func(t *testing.T) store.Store) *bundle {
	t.Helper()
	return &bundle{
		ctx: t.Context(),
		st:  open(t),
		now: time.Date(2026, 3, 14, 15, 9, 26, 535_000_000, time.UTC),
	}
}

// at returns now plus d, for fixtures that need distinct, ordered times.
func (b *bundle) at(d time.Duration) time.Time { return b.now.Add(d) }

// id returns a fresh fixture id with the given prefix.
func (b *bundle) id(prefix string) string {
	return fmt.Sprintf("%s-%04d", prefix, b.seq.Add(1))
}

// newTask returns a queued task with every field set.
func (b *bundle) newTask() task.Task {
	n := b.seq.Add(1)
	return task.Task{
		ID:           task.ID(fmt.Sprintf("01TASK%020d", n)),
		Title:        fmt.Sprintf("task %d", n),
		Goal:         "make the thing work",
		Acceptance:   []string{"it builds", "the tests pass"},
		Verify:       "go test ./...",
		Repo:         "/repo",
		Pipeline:     task.Pipeline{task.PhasePlan, task.PhaseImplement},
		Harness:      "claude",
		Model:        "opus",
		Capabilities: []string{"go", "sqlite"},
		State:        task.StateQueued,
		Phase:        task.PhasePlan,
		Attempt:      0,
		CreatedAt:    b.at(time.Duration(n) * time.Second),
		UpdatedAt:    b.at(time.Duration(n) * time.Second),
	}
}

// insertTask stores a new task and returns it.
func (b *bundle) insertTask(t *testing.T) task.Task {
	t.Helper()
	tk := b.newTask()
	require.NoError(t, b.st.TaskInsert(b.ctx, tk))
	return tk
}

// event returns an event of kind for the task, with every field set.
func (b *bundle) event(taskID task.ID, kind task.Kind) task.Event {
	n := b.seq.Add(1)
	return task.Event{
		ID:        fmt.Sprintf("01EVENT%019d", n),
		TaskID:    taskID,
		SessionID: "sess-1",
		Kind:      kind,
		Reason:    task.Reason("some-reason"),
		Text:      fmt.Sprintf("event %d happened", n),
		Data:      json.RawMessage(fmt.Sprintf(`{"n":%d}`, n)),
		At:        b.at(time.Duration(n) * time.Millisecond),
	}
}

// events lists the ledger of one task.
func (b *bundle) events(t *testing.T, taskID task.ID) []task.Event {
	t.Helper()
	evs, err := b.st.EventList(b.ctx, store.EventListParams{TaskID: taskID})
	require.NoError(t, err)
	return evs
}

// requireEvents checks the ledger of a task holds exactly want, in order,
// comparing everything but the store-assigned Seq.
func (b *bundle) requireEvents(t *testing.T, taskID task.ID, want ...task.Event) {
	t.Helper()
	got := b.events(t, taskID)
	require.Len(t, got, len(want), "events of task %s", taskID)
	for i := range got {
		require.Positive(t, got[i].Seq, "event %d has no seq", i)
		g := got[i]
		g.Seq = 0
		require.Equal(t, want[i], g, "event %d", i)
	}
}

package coord

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// failingSeal is the real store with its first n artifact seals failing, as
// a full disk or a locked database would make them.
type failingSeal struct {
	store.Store
	left atomic.Int32
}

func (f *failingSeal) ArtifactSeal(ctx context.Context, p store.ArtifactSealParams) (store.Artifact, error) {
	if f.left.Add(-1) >= 0 {
		return store.Artifact{}, errors.New("disk I/O error (injected)")
	}
	return f.Store.ArtifactSeal(ctx, p)
}

// Path is the wrapped store's file: the failure is an embedded store's,
// refused and charged, not a network store's outage that the seal waits
// through (advance.go).
func (f *failingSeal) Path() string {
	if p, ok := f.Store.(pathed); ok {
		return p.Path()
	}
	return ""
}

// A phase whose artifact cannot be sealed must not leave its task running
// with a finished session that no lease tick looks at any more: the
// session is stopped and the phase runs again, and the retry finishes it.
func TestSealFailureRequeuesInsteadOfStalling(t *testing.T) {
	t.Parallel()
	fixed := []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}
	b := setupWrapped(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: fixed}},
	}}, nil, func(s store.Store) store.Store {
		f := &failingSeal{Store: s}
		f.left.Store(1)
		return f
	})
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})

	refused := b.waitEvent(t, 30*time.Second, func(e task.Event) bool {
		return e.Kind == task.EvRefusal && e.TaskID == id && e.Reason == task.ReasonArtifactNotSealed
	})
	require.Contains(t, refused.Text, "disk I/O error (injected)")
	requeued := b.waitEvent(t, 30*time.Second, kindIs(task.EvTaskRequeued))
	require.Equal(t, task.ReasonArtifactNotSealed, requeued.Reason, b.dump())
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	tk, err := b.st.TaskGet(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, 2, tk.Attempt, "the retry sealed and finished the phase")
}

// failingClaim is the real store with its first claim failing.
type failingClaim struct {
	store.Store
	left atomic.Int32
}

func (f *failingClaim) LeaseClaim(ctx context.Context, p store.LeaseClaimParams) (store.TaskTransitionResult, error) {
	if f.left.Add(-1) >= 0 {
		return store.TaskTransitionResult{}, errors.New("database is locked (injected)")
	}
	return f.Store.LeaseClaim(ctx, p)
}

// The lease, the attempt and its event are one write: a claim that fails
// leaves the task queued with nothing half-written, and the next placement
// runs it as attempt 1. The store is taken for a network one (the wrapper
// has no Path): its failed claim is an outage, said once, not the task's
// refusal.
func TestAFailedClaimLeavesTheTaskQueued(t *testing.T) {
	t.Parallel()
	fixed := []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}
	b := setupWrapped(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: fixed}},
	}}, nil, func(s store.Store) store.Store {
		f := &failingClaim{Store: s}
		f.left.Store(1)
		return f
	})
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	refused := b.waitEvent(t, 30*time.Second, func(e task.Event) bool {
		return e.Kind == task.EvRefusal && (e.TaskID == id || e.Reason == task.ReasonStoreFailed)
	})
	require.Equal(t, task.ReasonStoreFailed, refused.Reason, b.dump())
	require.Contains(t, refused.Text, "database is locked (injected)")
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	tk, err := b.st.TaskGet(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, 1, tk.Attempt, "the lease that was never recorded is not an attempt")
}

// failingBriefRead is the real store with its first read of dead ends (a
// brief's last input) failing.
type failingBriefRead struct {
	store.Store
	left atomic.Int32
}

func (f *failingBriefRead) DeadEndList(ctx context.Context, id task.ID) ([]store.DeadEnd, error) {
	if f.left.Add(-1) >= 0 {
		return nil, errors.New("disk I/O error (injected)")
	}
	return f.Store.DeadEndList(ctx, id)
}

// Path is the wrapped store's file: the failure is an embedded store's,
// refused and charged, not a network store's outage that the brief waits
// through (report.go).
func (f *failingBriefRead) Path() string {
	if p, ok := f.Store.(pathed); ok {
		return p.Path()
	}
	return ""
}

// A confirmed session whose brief cannot be rendered waits at its prompt
// for a brief that never comes; it is not stuck (it waits on the console)
// and makes no progress, so only the lease, twenty minutes by default,
// would end it. It is stopped at once and the phase runs again.
func TestABriefThatCannotBeRenderedRequeuesAtOnce(t *testing.T) {
	t.Parallel()
	fixed := []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}
	b := setupWrapped(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: fixed}},
	}}, nil, func(s store.Store) store.Store {
		f := &failingBriefRead{Store: s}
		f.left.Store(1)
		return f
	})
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	refused := b.waitEvent(t, 30*time.Second, refusalOf(task.ReasonDeliveryFailed))
	require.Contains(t, refused.Text, "disk I/O error (injected)")
	requeued := b.waitEvent(t, 30*time.Second, kindIs(task.EvTaskRequeued))
	require.Equal(t, task.ReasonDeliveryFailed, requeued.Reason)
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	tk, err := b.st.TaskGet(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, 2, tk.Attempt)
}

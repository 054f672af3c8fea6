package task

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The merge queue's path through the lifecycle, and what it refuses.
func TestMergeQueueTransitions(t *testing.T) {
	t.Parallel()
	path := []struct {
		from State
		a    Action
		to   State
	}{
		{StateAwaitingReview, ActQueueMerge, StateMergeQueued},
		{StateCompleted, ActQueueMerge, StateMergeQueued},
		{StateCompleted, ActLand, StateMerged},
		{StateMergeQueued, ActIntegrate, StateIntegrating},
		{StateIntegrating, ActLand, StateMerged},
		{StateIntegrating, ActReturn, StateQueued},
		{StateIntegrating, ActUnqueue, StateMergeQueued},
		{StateIntegrating, ActHold, StateAwaitingReview},
	}
	for _, p := range path {
		got, err := Apply(p.from, p.a)
		require.NoError(t, err, "%s --%s-->", p.from, p.a)
		require.Equal(t, p.to, got)
	}
	for _, bad := range []struct {
		from State
		a    Action
	}{
		{StateMergeQueued, ActLand}, // only an integrated, green tree lands
		{StateRunning, ActQueueMerge},
		{StateMerged, ActRetry},
		{StateMerged, ActQueueMerge},
		{StateFailed, ActQueueMerge},
	} {
		_, err := Apply(bad.from, bad.a)
		require.Error(t, err, "%s --%s--> must be refused", bad.from, bad.a)
	}
	require.True(t, StateMerged.Terminal())
	require.False(t, StateIntegrating.Terminal())
	require.True(t, StateIntegrating.InMergeQueue())
}

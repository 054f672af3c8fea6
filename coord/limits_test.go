package coord

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A 1 MB correction is refused with the limit named and nothing recorded;
// one at the limit is accepted.
func TestCorrectionOverTheLimitIsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	_, err := b.c.Do(context.Background(), Command{Kind: CmdCorrect, TaskID: id, Text: strings.Repeat("x", 1<<20)})
	require.ErrorContains(t, err, "a correction is at most 16384 bytes and this one is 1048576")
	require.ErrorContains(t, err, "limits.correction_bytes")
	b.barrier(t)
	require.Empty(t, b.ledger(t, id, kindIs(task.EvDecisionRecorded)))

	_, err = b.c.Do(context.Background(), Command{Kind: CmdCorrect, TaskID: id, Text: strings.Repeat("y", 16<<10)})
	require.NoError(t, err)
	require.Len(t, b.ledger(t, id, kindIs(task.EvDecisionRecorded)), 1)
}

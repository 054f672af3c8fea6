package coord

import (
	"context"
	"encoding/json"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// A restarted engine reads a phase's lower-bound mark back from the store's
// usage sums, as its session's usage event carried it, whatever the task's
// harness says now: here the fake harness, whose sessions record every
// request, on a task a Codex session had spent on before a handoff. A phase
// no marked event touched stays unmarked.
func TestFakeRestartKeepsTheUsageLowerBound(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, nil)
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		b.barrier(t)
		b.stop()
		const why = "Codex's interactive sessions ask for titles in requests its rollout files do not record."
		var evs []task.Event
		for i, c := range []struct {
			phase task.Phase
			lower string
		}{{task.PhasePlan, why}, {task.PhasePlan, ""}, {task.PhaseImplement, ""}} {
			data, err := json.Marshal(UsageData{SessionID: "S", Phase: c.phase, LowerBound: c.lower,
				Totals: task.UsageTotals{Models: map[string]task.ModelTotals{"gpt-stub": {Tokens: task.Tokens{Input: 1000}}}}})
			require.NoError(t, err)
			evs = append(evs, task.Event{ID: task.NewULID(time.Now().Add(time.Duration(i))), TaskID: id, SessionID: "S",
				Kind: task.EvUsage, Text: "used", Data: data, At: time.Now()})
		}
		require.NoError(t, b.st.EventAppend(context.Background(), evs...))

		b.run(t, b.storePath(), nil)
		b.barrier(t)
		var u Usage
		for _, v := range b.c.Snapshot().Tasks {
			if v.Task.ID == id {
				u = v.Usage
			}
		}
		require.Equal(t, int64(3000), u.InputTokens)
		require.Equal(t, why, u.LowerBound, "the task's usage is a lower bound after the restart")
		require.Equal(t, why, u.Phases[task.PhasePlan].LowerBound)
		require.Empty(t, u.Phases[task.PhaseImplement].LowerBound)
	})
}

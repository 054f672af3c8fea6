package coord

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// spentEvent is a session.usage event of task id (or of no task) costing
// usd at the stub's price (gpt-stub: $10 a million input tokens).
func spentEvent(t *testing.T, id task.ID, at time.Time, usd float64) task.Event {
	t.Helper()
	price := config.DefaultPrices()["gpt-stub"]
	tk := task.Tokens{Input: int64(usd * 1e6 / price.Input)}
	d := UsageData{SessionID: "S-earlier", Phase: task.PhaseImplement, Totals: task.UsageTotals{Models: map[string]task.ModelTotals{
		"gpt-stub": {Tokens: tk, CostUSD: task.Cost(price, tk), Priced: true}}}}
	data, err := json.Marshal(d)
	require.NoError(t, err)
	return task.Event{ID: task.NewULID(at), TaskID: id, SessionID: "S-earlier", Kind: task.EvUsage, Text: "earlier session", Data: data, At: at}
}

// The day's budget, on the fake clock: an engine that starts on a day
// whose ledger already holds more than budget.day places nothing, says so
// once (the event that notifies) and flags the queued task; at midnight
// placement goes on and the task runs.
func TestFakeDayBudgetStopsPlacementUntilTheNextDay(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) { cfg.Budget.Day = 0.05 })
		b.stop()
		now := time.Now()
		require.NoError(t, b.st.EventAppend(context.Background(),
			spentEvent(t, "", now.Add(-25*time.Hour), 10), // yesterday's: does not count
			spentEvent(t, "", now, 0.03), spentEvent(t, "", now, 0.03)))
		b.run(t, sqlite.DefaultPath(b.root), nil)

		id := b.add(t, task.Pipeline{task.PhaseImplement})
		reached := b.waitEvent(t, kindIs(task.EvBudgetDayReached))
		var d task.BudgetData
		require.NoError(t, json.Unmarshal(reached.Data, &d))
		require.InDelta(t, 0.06, d.SpentUSD, 1e-9)
		require.InDelta(t, 0.05, d.BudgetUSD, 1e-9)
		require.Equal(t, task.ReasonDayBudget, reached.Reason)
		require.Contains(t, reached.Text, "$0.0600 of $0.0500")

		// An hour later: still held, said once.
		time.Sleep(time.Hour)
		b.barrier(t)
		tv := b.taskView(t, id)
		require.Equal(t, task.StateQueued, tv.Task.State)
		require.True(t, strings.HasPrefix(tv.Flag, FlagDayBudget), tv.Flag)
		s := b.c.Snapshot()
		require.NotNil(t, s.Budget)
		require.True(t, s.Budget.DayStopped)
		require.InDelta(t, 0.06, s.Budget.DaySpentUSD, 1e-9)
		n := 0
		for _, e := range b.events {
			if e.Kind == task.EvBudgetDayReached {
				n++
			}
			require.NotEqual(t, task.EvSessionLaunched, e.Kind, "nothing is launched while the day's budget is spent")
		}
		require.Equal(t, 1, n, "the day's budget is told once")

		// The next day of the engine's clock: placement goes on.
		cleared := b.waitEvent(t, kindIs(task.EvBudgetDayCleared))
		require.NotEqual(t, reached.At.In(time.Local).Format(time.DateOnly), cleared.At.In(time.Local).Format(time.DateOnly))
		a, _ := b.launch(t)
		a.Finish(nil)
		require.Equal(t, task.EvTaskAwaiting, b.waitEvent(t, ended).Kind, b.dump())
		require.False(t, b.c.Snapshot().Budget.DayStopped)
	})
}

// A task's budget, on the fake clock: a queued task whose sessions have
// spent budget.task is parked before it is placed again, with the figures
// (reason, text and data); unparked, it may spend a budget more, and runs.
func TestFakeTaskBudgetParksWithTheFigures(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(cfg *config.Config) { cfg.Budget.Task = 0.05 })
		_, err := b.c.Do(context.Background(), Command{Kind: CmdAdd, Task: &task.Task{
			Title: "Fix calc", Goal: "g", Acceptance: []string{"a"}, Verify: "true", Harness: fakeHarness,
			Pipeline: task.Pipeline{task.PhaseImplement}, State: task.StateParked}})
		require.NoError(t, err)
		id := b.c.Snapshot().Tasks[0].Task.ID
		if st := b.taskView(t, id).Task.State; st != task.StateParked {
			_, err = b.c.Do(context.Background(), Command{Kind: CmdPark, TaskID: id})
			require.NoError(t, err)
		}
		b.stop()
		require.NoError(t, b.st.EventAppend(context.Background(), spentEvent(t, id, time.Now(), 0.06)))
		b.run(t, sqlite.DefaultPath(b.root), nil)

		_, err = b.c.Do(context.Background(), Command{Kind: CmdUnpark, TaskID: id})
		require.NoError(t, err)
		b.barrier(t)
		// Unparked by the operator before the budget parked it: the
		// spend is over the budget, so it is parked, not placed.
		parked := b.waitEvent(t, func(e task.Event) bool { return e.Kind == task.EvTaskParked && e.Reason == task.ReasonTaskBudget })
		var d task.BudgetData
		require.NoError(t, json.Unmarshal(parked.Data, &d))
		require.InDelta(t, 0.06, d.SpentUSD, 1e-9)
		require.InDelta(t, 0.05, d.BudgetUSD, 1e-9)
		require.Contains(t, parked.Text, "spent $0.0600 of its budget of $0.0500")
		tv := b.taskView(t, id)
		require.Equal(t, task.StateParked, tv.Task.State)
		require.Equal(t, "budget: $0.0600 of $0.0500 spent", tv.Task.Reason)
		require.Equal(t, 0, tv.Task.Attempt, "no attempt charged")

		// Unparked after the budget's park: one budget more.
		_, err = b.c.Do(context.Background(), Command{Kind: CmdUnpark, TaskID: id})
		require.NoError(t, err)
		a, _ := b.launch(t)
		a.Finish(nil)
		require.Equal(t, task.EvTaskAwaiting, b.waitEvent(t, ended).Kind, b.dump())
	})
}

package ui

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The verdict strip's spend names the task's budget and, once the day's
// is spent, says so; a lower bound reads "≥"; the banner tells the day's
// stop with its figures; a parked or held task's row carries the reason.
func TestBudgetShowsInTheStripTheBannerAndTheList(t *testing.T) {
	t.Parallel()
	u := coord.Usage{InputTokens: 3000, OutputTokens: 100, CostUSD: 0.0525, Models: []string{"claude-demo-stub"}}
	b := &coord.BudgetView{TaskUSD: 0.05, DayUSD: 50, Day: "2026-12-02", DaySpentUSD: 50.5}
	forms := spendForms(u, b)
	require.Equal(t, "$0.0525 of $0.05 budget", forms[len(forms)-1])
	require.Contains(t, forms[0], "$0.0525 of $0.05 budget · claude-demo-stub · 3.0k in")
	require.Empty(t, dayBudgetBanner(b))

	b.DayStopped, b.DayLowerBound = true, true
	u.LowerBound = "side requests"
	forms = spendForms(u, b)
	require.Equal(t, "≥$0.0525 of $0.05 budget · day budget spent", forms[len(forms)-1])
	require.Equal(t, "Budget: the day's budget is spent (≥$50.5000 of $50 on 2026-12-02); nothing new starts until tomorrow or a raised [budget] day", dayBudgetBanner(b))
	require.Nil(t, spendForms(coord.Usage{}, nil), "no usage and no budget: nothing")

	parked := coord.TaskView{Task: task.Task{State: task.StateParked, Reason: "budget: $0.0525 of $0.0500 spent"}}
	require.Equal(t, "budget: $0.0525 of $0.0500 spent", taskFlag(parked))
	held := coord.TaskView{Task: task.Task{State: task.StateQueued}, Flag: coord.FlagDayBudget + "$50.5000 of $50.0000 spent on 2026-12-02; starts tomorrow"}
	require.Equal(t, held.Flag, taskFlag(held))
}

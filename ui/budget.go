package ui

import (
	"fmt"
	"strconv"

	"github.com/orchestra-tui/orchestra-tui/coord"
)

// budgetOf is what follows a task's cost in the verdict strip when
// [budget] is set: " of $5 budget", and the day's state once it is spent.
func budgetOf(b *coord.BudgetView) string {
	if b == nil {
		return ""
	}
	s := ""
	if b.TaskUSD > 0 {
		s = " of " + money(b.TaskUSD) + " budget"
	}
	if b.DayStopped {
		s += " · day budget spent"
	}
	return s
}

// dayBudgetBanner is the banner's title while the day's budget holds
// placement; "" otherwise.
func dayBudgetBanner(b *coord.BudgetView) string {
	if b == nil || !b.DayStopped {
		return ""
	}
	spent := fmt.Sprintf("$%.4f", b.DaySpentUSD)
	if b.DayLowerBound {
		spent = "≥" + spent
	}
	return fmt.Sprintf("Budget: the day's budget is spent (%s of %s on %s); nothing new starts until tomorrow or a raised [budget] day",
		spent, money(b.DayUSD), b.Day)
}

// money is a budget's amount as the operator wrote it: $5, $0.05.
func money(v float64) string { return "$" + strconv.FormatFloat(v, 'f', -1, 64) }

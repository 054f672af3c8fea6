package task

// Budgets ([budget] in orchestra.toml): what a task, and every task in one
// day, may spend. Their reasons and event kinds live in a file of their
// own; init adds them to Reasons and Kinds, so the tests that enumerate
// them see them like any other.
const (
	// ReasonTaskBudget: the task's sessions spent its budget; it was
	// parked at the end of the turn that reached it (EvTaskParked, whose
	// Data is a BudgetData).
	ReasonTaskBudget Reason = "task-budget-spent"
	// ReasonDayBudget: every task's spend today reached the day's
	// budget; nothing new is placed until the next day or a raised
	// budget.
	ReasonDayBudget Reason = "day-budget-spent"
)

// Event kinds of the day's budget, engine-wide (no task).
const (
	// EvBudgetDayReached: the day's spend reached the day's budget;
	// placement stops. Data is a BudgetData.
	EvBudgetDayReached Kind = "budget.day-reached"
	// EvBudgetDayCleared: a new day began, or the budget was raised
	// above the spend; placement goes on. Data is a BudgetData.
	EvBudgetDayCleared Kind = "budget.day-cleared"
)

// BudgetData is the Data of a budget park or a day's budget event: the
// figures, in US dollars.
type BudgetData struct {
	SpentUSD  float64 `json:"spent_usd"`
	BudgetUSD float64 `json:"budget_usd"`
	// Day is the calendar day (YYYY-MM-DD, the engine's clock) of a day's
	// budget event; empty for a task's.
	Day string `json:"day,omitempty"`
	// LowerBound says the spend is at least SpentUSD: a session's CLI
	// made requests it records nowhere.
	LowerBound bool `json:"lower_bound,omitempty"`
}

var budgetSentences = map[Reason]string{
	ReasonTaskBudget: "The task spent its budget ([budget] task); it was parked at the end of its turn. Unpark it, or raise the budget, to go on.",
	ReasonDayBudget:  "Today's spend reached the day's budget ([budget] day); nothing new starts until tomorrow or a raised budget.",
}

func init() {
	for _, r := range []Reason{ReasonTaskBudget, ReasonDayBudget} {
		Reasons = append(Reasons, r)
		sentences[r] = budgetSentences[r]
	}
	Kinds = append(Kinds, EvBudgetDayReached, EvBudgetDayCleared)
}

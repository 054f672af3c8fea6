package coord

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// BudgetView is [budget] as the console shows it: the limits and the day's
// spend against them. Nil in a snapshot when no budget is set.
type BudgetView struct {
	// TaskUSD and DayUSD are the limits; zero means none.
	TaskUSD float64 `json:",omitempty"`
	DayUSD  float64 `json:",omitempty"`
	// Day is today's date by the engine's clock (YYYY-MM-DD) and
	// DaySpentUSD what every task spent in it so far, live sessions
	// included.
	Day         string
	DaySpentUSD float64
	// DayLowerBound says a session that spent today runs a CLI that
	// makes requests it records nowhere: the day spent at least this.
	DayLowerBound bool `json:",omitempty"`
	// DayStopped says the day's budget is spent: nothing new is placed
	// until Day ends or the budget is raised.
	DayStopped bool `json:",omitempty"`
}

// FlagDayBudget starts the flag of a queued task held by the day's budget.
const FlagDayBudget = "day budget: "

// budget enforces [budget] on the loop (it is the loop's alone):
//
//   - a task whose spend reaches budget.task is parked as soon as the
//     reply that reached it is counted (the end of the agent's turn: its
//     usage is written when a reply completes), and a queued task that has
//     spent it is parked before it is placed again;
//   - once the day's spend reaches budget.day, placement stops until the
//     next day of the engine's clock or a raised budget; running sessions
//     go on within their tasks' budgets.
//
// The day's spend is the cost of the session.usage events written today
// (a session is counted on the day it ends) plus the live sessions'
// so far. Both limits are notified once: the park event for the task,
// EvBudgetDayReached for the day (notify.For).
type budget struct {
	taskUSD, dayUSD float64
	loc             *time.Location

	day        string  // the day the figures below count
	dayEnded   float64 // sessions that ended on day
	dayLower   bool    // one of them recorded its usage as a lower bound
	dayStopped bool    // EvBudgetDayReached recorded for day
	// allowance is what a task unparked after its budget park has
	// already spent: it may spend a budget more.
	allowance map[task.ID]float64
}

func newBudget(taskUSD, dayUSD float64, loc *time.Location) budget {
	if loc == nil {
		loc = time.Local
	}
	return budget{taskUSD: taskUSD, dayUSD: dayUSD, loc: loc, allowance: map[task.ID]float64{}}
}

// dayOf is t's calendar day in the budget's zone.
func (b *budget) dayOf(t time.Time) string { return t.In(b.loc).Format(time.DateOnly) }

// dayStart is the first instant of t's day.
func (b *budget) dayStart(t time.Time) time.Time {
	y, m, d := t.In(b.loc).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, b.loc)
}

// ended counts a session's usage event written at at.
func (b *budget) ended(at time.Time, usd float64, lower bool) {
	if b.dayOf(at) != b.day {
		return // another day's: the day rolls over in dayCheck
	}
	b.dayEnded += usd
	b.dayLower = b.dayLower || lower
}

// over reports whether spent has reached the task's budget, beyond what
// it was allowed when unparked.
func (b *budget) over(id task.ID, spent float64) bool {
	return b.taskUSD > 0 && spent-b.allowance[id] >= b.taskUSD
}

// limit is the spend at which task id is parked.
func (b *budget) limit(id task.ID) float64 { return b.taskUSD + b.allowance[id] }

// loadBudgetDay sums today's session.usage events from the ledger. The
// ledger is ordered by Seq and its events stamped by one clock, so the
// first event of today is found by bisection on Seq (a few reads of one
// event) and only today's events are read.
func loadBudgetDay(ctx context.Context, c *Coordinator) error {
	b := &c.budget
	now := c.now()
	b.day = b.dayOf(now)
	if b.dayUSD <= 0 {
		return nil
	}
	last, err := c.st.EventLastSeq(ctx)
	if err != nil || last == 0 {
		return err
	}
	start := b.dayStart(now)
	lo, hi := int64(0), last // the answer is in (lo, hi]: the first Seq at or after start
	for lo+1 < hi {
		mid := lo + (hi-lo)/2
		evs, err := c.st.EventList(ctx, store.EventListParams{AfterSeq: mid - 1, Limit: 1})
		if err != nil {
			return fmt.Errorf("read today's spend: %w", err)
		}
		if len(evs) == 0 || !evs[0].At.Before(start) {
			hi = mid
		} else {
			lo = mid
		}
	}
	after := hi - 1
	for {
		evs, err := c.st.EventList(ctx, store.EventListParams{AfterSeq: after, Limit: refreshBatch})
		if err != nil {
			return fmt.Errorf("read today's spend: %w", err)
		}
		for _, e := range evs {
			after = max(after, e.Seq)
			if e.Kind != task.EvUsage || len(e.Data) == 0 || e.At.Before(start) {
				continue
			}
			var d UsageData
			if json.Unmarshal(e.Data, &d) == nil {
				_, usd := d.Totals.Sum()
				b.ended(e.At, usd, d.LowerBound != "")
			}
		}
		if len(evs) < refreshBatch {
			return nil
		}
	}
}

// daySpent is today's spend with the live sessions', and whether it is a
// lower bound.
func daySpent(c *Coordinator) (float64, bool) {
	b := &c.budget
	spent, lower := b.dayEnded, b.dayLower
	for _, r := range c.runs {
		if r.meter == nil {
			continue
		}
		_, usd := r.meter.total().Sum()
		spent += usd
		lower = lower || r.meter.lowerBound != ""
	}
	return spent, lower
}

// dayCheck rolls the day over and reports whether the day's budget stops
// placement, recording the change (once each way) when it does or no
// longer does.
func dayCheck(ctx context.Context, c *Coordinator) bool {
	b := &c.budget
	now := c.now()
	if d := b.dayOf(now); d != b.day {
		b.day, b.dayEnded, b.dayLower = d, 0, false
	}
	if b.dayUSD <= 0 && !b.dayStopped {
		return false
	}
	spent, lower := daySpent(c)
	stop := b.dayUSD > 0 && spent >= b.dayUSD
	if stop == b.dayStopped {
		return stop
	}
	b.dayStopped = stop
	data, _ := json.Marshal(task.BudgetData{SpentUSD: spent, BudgetUSD: b.dayUSD, Day: b.day, LowerBound: lower})
	var ev task.Event
	if stop {
		ev = c.event("", "", task.EvBudgetDayReached, fmt.Sprintf(
			"The day's budget is spent: %s of %s on %s. Nothing new starts until tomorrow or a raised [budget] day; running sessions go on.",
			usd(spent, lower), usd(b.dayUSD, false), b.day))
		ev.Reason = task.ReasonDayBudget
	} else {
		ev = c.event("", "", task.EvBudgetDayCleared, fmt.Sprintf(
			"Placement goes on: %s of the day's budget of %s spent on %s.", usd(spent, lower), usd(b.dayUSD, false), b.day))
	}
	ev.Data = data
	c.record(ctx, ev)
	return stop
}

// checkTaskBudgets parks every running task that has spent its budget,
// stopping its session: the check runs on the loop right after a usage
// record is counted, so at the end of the reply that reached the budget.
func checkTaskBudgets(ctx context.Context, c *Coordinator) {
	b := &c.budget
	if b.taskUSD <= 0 {
		return
	}
	for id, r := range c.runs {
		if r.stopping || r.finishing {
			continue
		}
		u := c.usage.of(id, c.runs[id])
		if b.over(id, u.CostUSD) {
			parkForBudget(ctx, c, c.tasks[id], r, u)
		}
	}
}

// parkForBudget parks t (queued, leased or running; r its live run or
// nil) for its budget, with the figures in the event's text and data.
// No attempt is charged: the agent did nothing wrong.
func parkForBudget(ctx context.Context, c *Coordinator, t task.Task, r *run, u Usage) bool {
	b := &c.budget
	limit := b.limit(t.ID)
	lower := u.LowerBound != ""
	text := fmt.Sprintf("Parked: the task spent %s of its budget of %s ([budget] task). Unpark it to let it spend %s more, or raise the budget.",
		usd(u.CostUSD, lower), usd(limit, false), usd(b.taskUSD, false))
	ev := c.event(t.ID, "", task.EvTaskParked, text)
	ev.Reason = task.ReasonTaskBudget
	ev.Data, _ = json.Marshal(task.BudgetData{SpentUSD: u.CostUSD, BudgetUSD: limit, LowerBound: lower})
	reason := fmt.Sprintf("%s%s of %s spent", budgetReason, usd(u.CostUSD, lower), usd(limit, false))
	var token int64
	if r != nil {
		token, ev.SessionID = r.token, r.sessionID
	}
	attempt := t.Attempt
	edit := func(n *task.Task) {
		n.Reason = reason
		if r != nil && attempt > 0 {
			n.Attempt-- // the next launch after unpark is the same attempt
		}
	}
	if !c.life.move(ctx, t.ID, token, task.ActPark, edit, ev) {
		return false
	}
	if r != nil && !r.stopping {
		c.life.stopThen(ctx, r, store.SessionKilled, text, nil)
	}
	return true
}

// budgetReason starts the Reason of a task its budget parked.
const budgetReason = "budget: "

// unparkedFromBudget notes that the operator unparked a task its budget
// parked: it may spend one budget more from what it has spent. A task the
// operator parked is only unparked: over its budget, it is parked again
// before it is placed.
func unparkedFromBudget(c *Coordinator, t task.Task) {
	if c.budget.taskUSD <= 0 || t.State != task.StateParked || !strings.HasPrefix(t.Reason, budgetReason) {
		return
	}
	if spent := c.usage.of(t.ID, c.runs[t.ID]).CostUSD; c.budget.over(t.ID, spent) {
		c.budget.allowance[t.ID] = spent
	}
}

// budgetView is the snapshot's budget, nil when none is set.
func budgetView(c *Coordinator) *BudgetView {
	b := &c.budget
	if b.taskUSD <= 0 && b.dayUSD <= 0 {
		return nil
	}
	spent, lower := daySpent(c)
	return &BudgetView{TaskUSD: b.taskUSD, DayUSD: b.dayUSD, Day: b.day, DaySpentUSD: spent, DayLowerBound: lower, DayStopped: b.dayStopped}
}

// dayFlag is the flag of a queued task while the day's budget holds
// placement; "" otherwise.
func dayFlag(v *BudgetView) string {
	if v == nil || !v.DayStopped {
		return ""
	}
	return fmt.Sprintf("%s%s of %s spent on %s; starts tomorrow", FlagDayBudget, usd(v.DaySpentUSD, v.DayLowerBound), usd(v.DayUSD, false), v.Day)
}

// usd is an amount for the operator: "$0.0512", "≥$0.0512" for a lower
// bound.
func usd(v float64, lower bool) string {
	s := fmt.Sprintf("$%.4f", v)
	if v >= 100 {
		s = fmt.Sprintf("$%.2f", v)
	}
	if lower {
		return "≥" + s
	}
	return s
}

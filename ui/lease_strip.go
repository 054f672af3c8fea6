package ui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
)

// leaseClocks are a lease's timers as of now. The snapshot computed them at
// its own instant; moving them forward by the time since lets the strip tick
// every second without asking the engine again.
type leaseClocks struct {
	remaining, windowIn, sinceProgress time.Duration
}

// clocksOf is lease l's timers at now, from a snapshot taken at snapAt.
func clocksOf(l coord.LeaseView, snapAt, now time.Time) leaseClocks {
	elapsed := time.Duration(0)
	if !snapAt.IsZero() {
		elapsed = max(now.Sub(snapAt), 0)
	}
	c := leaseClocks{
		remaining:     l.Remaining - elapsed,
		sinceProgress: l.SinceProgress + elapsed,
	}
	if !l.Deadline.IsZero() {
		c.remaining = l.Deadline.Sub(now)
	}
	if l.WindowOpensIn > 0 {
		c.windowIn = max(l.WindowOpensIn-elapsed, 0)
	}
	return c
}

// stripView is what the strips above the selected task's tab draw from:
// the task header and tab bar (tabs.go), the lease strip with its trained
// bases (usage.go) and the verdict strip. The root model builds one per
// frame (strips).
type stripView struct {
	st        styles
	now       time.Time
	snapAt    time.Time // the snapshot's instant: the clocks tick from it
	bases     []coord.BaseView
	budget    *coord.BudgetView
	tab       tab  // the active tab
	scrolling bool // modeScroll: the tab bar says how to leave it
}

// strips is the view of the strips for this frame.
func (m *Model) strips() stripView {
	return stripView{st: m.st, now: m.now(), snapAt: m.snap.At, bases: m.snap.Bases,
		budget: m.snap.Budget, tab: m.tab, scrolling: m.mode == modeScroll}
}

// lease draws the lease strip of the selected task in up to maxLines
// lines: remaining, renewal window, progress, renewals and the last decision.
func (sv stripView) lease(tv coord.TaskView, ok bool, w, maxLines int) []string {
	if !ok {
		return block(nil, w, maxLines)
	}
	l := tv.Lease
	if l == nil {
		return sv.withBases(tv, []string{sv.st.dim.Render("lease · none (" + string(tv.Task.State) + ")")}, w, maxLines)
	}
	parts := sv.leaseParts(*l, clocksOf(*l, sv.snapAt, sv.now))
	return sv.withBases(tv, wrapParts(parts, w, maxLines-baseCount(sv.bases, tv.Task.ID)), w, maxLines)
}

// leaseRows is how many lines, up to maxLines, the lease strip of the
// selected task needs at width w, not counting its bases: the layout gives
// the strip no row it would leave blank. It measures the widest its clocks
// draw (a window still to open, progress hours ago), so the count, and the
// pane's size with it, holds while they tick.
func (sv stripView) leaseRows(tv coord.TaskView, ok bool, w, maxLines int) int {
	if !ok || tv.Lease == nil {
		return 1
	}
	widest := leaseClocks{remaining: time.Hour, windowIn: time.Minute, sinceProgress: 10 * time.Hour}
	return max(min(len(wrapParts(sv.leaseParts(*tv.Lease, widest), w, maxLines)), maxLines), 1)
}

// leaseParts are the lease strip's parts for lease l at clocks c.
func (sv stripView) leaseParts(l coord.LeaseView, c leaseClocks) []string {
	remain := "lease " + clock(c.remaining) + " left"
	switch {
	case c.remaining <= 0:
		remain = sv.st.bad.Render("lease expired")
	case c.remaining < time.Minute:
		remain = sv.st.warn.Render(remain)
	default:
		remain = sv.st.bold.Render(remain)
	}
	window := "renewal window open"
	if c.windowIn > 0 {
		window = "renewal window in " + clock(c.windowIn)
	}
	parts := []string{
		remain,
		window,
		"progress " + ago(c.sinceProgress) + " ago",
		fmt.Sprintf("renewals %d/%d", l.Renewals, l.MaxRenewals),
	}
	if l.LastDecision != "" {
		last := "last: " + l.LastDecision
		if r := reasonAfterDecision(l.LastReasonText); r != "" {
			last += " (" + r + ")"
		}
		parts = append(parts, last)
	}
	return parts
}

// reasonAfterDecision shortens a refusal sentence that follows the
// decision it explains: "refuse (The lease was not renewed: the pane made
// no real progress since the last renewal.)" says "not renewed" twice and
// is cut off on a narrow strip, so it becomes "refuse (the pane made no real
// progress since the last renewal)".
func reasonAfterDecision(s string) string {
	s = strings.TrimSuffix(strings.TrimSpace(s), ".")
	if _, rest, ok := strings.Cut(s, "The lease was not renewed: "); ok {
		s = rest
	}
	return s
}

// anyLiveLease reports whether some lease is running, which is the only time
// the clock needs to tick.
func anyLiveLease(tasks []coord.TaskView) bool {
	for _, tv := range tasks {
		if tv.Lease != nil && isLive(tv) {
			return true
		}
	}
	return false
}

// armLeaseTick schedules the next lease repaint if a lease is live and no
// tick is already pending.
func (m *Model) armLeaseTick() tea.Cmd {
	if m.leaseArmed || !anyLiveLease(m.snap.Tasks) {
		return nil
	}
	m.leaseArmed = true
	return m.tick(leaseTick, func(time.Time) tea.Msg { return leaseTickMsg{} })
}

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

func (m *Model) leaseClocks(l coord.LeaseView) leaseClocks {
	now := m.now()
	elapsed := time.Duration(0)
	if !m.snap.At.IsZero() {
		elapsed = max(now.Sub(m.snap.At), 0)
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

// renderLease draws the lease strip of the selected task in up to maxLines
// lines: remaining, renewal window, progress, renewals and the last decision.
func (m *Model) renderLease(tv coord.TaskView, ok bool, w, maxLines int) []string {
	if !ok {
		return block(nil, w, maxLines)
	}
	l := tv.Lease
	if l == nil {
		return m.withBases(tv, []string{m.st.dim.Render("lease · none (" + string(tv.Task.State) + ")")}, w, maxLines)
	}
	c := m.leaseClocks(*l)
	remain := "lease " + clock(c.remaining) + " left"
	switch {
	case c.remaining <= 0:
		remain = m.st.bad.Render("lease expired")
	case c.remaining < time.Minute:
		remain = m.st.warn.Render(remain)
	default:
		remain = m.st.bold.Render(remain)
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
	return m.withBases(tv, wrapParts(parts, w, maxLines-m.baseLines()), w, maxLines)
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
func (m *Model) anyLiveLease() bool {
	for _, tv := range m.snap.Tasks {
		if tv.Lease != nil && isLive(tv) {
			return true
		}
	}
	return false
}

// armLeaseTick schedules the next lease repaint if a lease is live and no
// tick is already pending.
func (m *Model) armLeaseTick() tea.Cmd {
	if m.leaseArmed || !m.anyLiveLease() {
		return nil
	}
	m.leaseArmed = true
	return m.tick(leaseTick, func(time.Time) tea.Msg { return leaseTickMsg{} })
}

func (m *Model) handleLeaseTick() tea.Cmd {
	m.leaseArmed = false
	m.setSnap(m.eng.Snapshot())
	m.fixSelection()
	if m.status != "" && m.pending == 0 && m.now().Sub(m.statusAt) > statusTTL {
		m.status = ""
	}
	return m.armLeaseTick()
}

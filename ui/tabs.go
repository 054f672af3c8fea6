package ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"
	"github.com/dustin/go-humanize"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// refreshTabs rebuilds the text of the scrollable tabs from the current
// detail. It runs in Update when the detail or the size changes, never per
// frame.
func (m *Model) refreshTabs() {
	w := max(m.tabs.brief.Width(), 1)
	if m.tabs.detailID == "" || m.tabs.detailID != m.selID {
		m.tabs.brief.SetContent(m.st.dim.Render("loading…"))
		m.tabs.verdicts.SetContent("")
		m.tabs.events.SetContent("")
		return
	}
	if m.tabs.detailErr != nil {
		msg := m.st.statusErr.Render("could not read this task: " + m.tabs.detailErr.Error())
		m.tabs.brief.SetContent(msg)
		m.tabs.verdicts.SetContent(msg)
		m.tabs.events.SetContent(msg)
		return
	}
	// Only the tab on screen is filled: a followed ledger changes with
	// every event, and filling a viewport measures every line of it.
	// setTab fills the tab it shows.
	switch m.tab {
	case tabBrief:
		atTop := m.tabs.brief.AtTop()
		m.tabs.brief.SetContent(m.tabs.briefContent(w))
		if atTop {
			m.tabs.brief.GotoTop()
		}
	case tabVerdict:
		tv, _ := m.selected()
		m.tabs.verdicts.SetContent(m.tabs.verdictContent(tv.Verdict, m.tabs.detail.Verdicts))
	case tabEvents:
		m.tabs.events.SetContent(m.tabs.eventsContent(w))
		m.tabs.events.GotoBottom()
	case tabDiff:
		m.rebuildDiff()
	}
}

// briefContent highlights the brief's section headings and marks the human
// decisions section, which outranks everything after it. Lines are wrapped
// at word boundaries here, to the tab's width, so a word is never split and
// every line of a decision keeps its mark.
func (dt *detailTabs) briefContent(w int) string {
	if strings.TrimSpace(dt.detail.Brief) == "" {
		return dt.st.dim.Render("no brief yet: one is rendered when a session launches")
	}
	mark := dt.st.warn.Render("┃ ")
	var out []string
	inDecisions := false
	for _, l := range strings.Split(strings.TrimRight(dt.detail.Brief, "\n"), "\n") {
		l = ansiSafe(l)
		switch {
		case strings.HasPrefix(l, "## "):
			inDecisions = strings.HasPrefix(l, task.HeadingDecisions)
			if inDecisions {
				out = append(out, dt.st.decisions.Render(fit(l+"  ◆ outranks the plan", w)))
				continue
			}
			for _, part := range wrap(l, w) {
				out = append(out, dt.st.heading.Render(part))
			}
		case strings.HasPrefix(l, "### "):
			for _, part := range wrap(l, w) {
				out = append(out, dt.st.heading.Render(part))
			}
		case inDecisions:
			for _, part := range wrap(l, max(w-2, 1)) {
				out = append(out, mark+part)
			}
		default:
			out = append(out, wrap(l, w)...)
		}
	}
	return strings.Join(out, "\n")
}

func (dt *detailTabs) eventLine(ev task.Event) string {
	at := ev.At.In(dt.now().Location()).Format("15:04:05")
	text := ansiSafe(ev.Text)
	if ev.IsRefusal() {
		// The event's text usually starts with the reason's sentence;
		// say it once.
		s := ev.Reason.Sentence()
		if strings.HasPrefix(text, s) {
			s = text
		} else if text != "" {
			s += " " + text
		}
		return dt.st.dim.Render(at) + " " + dt.st.refusal.Render("REFUSED "+string(ev.Reason)+" · "+s)
	}
	return dt.st.dim.Render(at) + " " + padRight(string(ev.Kind), 20) + " " + text
}

// tabBar is the tab names, each padded; compact pads only the active one,
// so five tabs leave the task's phase and state room beside them on a
// narrow pane.
func (sv stripView) tabBar(compact bool) string {
	var b strings.Builder
	for i, name := range tabNames {
		label := " " + string(rune('1'+i)) + " " + name + " "
		if compact && tab(i) != sv.tab {
			label = string(rune('1'+i)) + " " + name
			if i > 0 && tab(i-1) != sv.tab {
				label = " " + label
			}
		}
		if tab(i) == sv.tab {
			b.WriteString(sv.st.tabActive.Render(label))
		} else {
			b.WriteString(sv.st.tabIdle.Render(label))
		}
	}
	if sv.scrolling {
		b.WriteString(sv.st.warn.Render(" SCROLL · pgup/pgdn · esc leaves"))
	}
	return b.String()
}

// top is the selected task's first two lines: its id, title and
// flag over the tab bar, with its phase, state (in full: the list may show a
// short form) and attempt at the tab bar's right end, where they leave the
// title the most room. When the tab bar has no room for them they follow
// the title instead.
func (sv stripView) top(tv coord.TaskView, ok bool, w int) (header, tabs string) {
	bar := sv.tabBar(false)
	if !ok {
		return sv.st.dim.Render(fit("no task selected", w)), fit(bar, w)
	}
	t := tv.Task
	// Compact tabs where the padded ones leave a running implement phase
	// no room: chosen by width alone, so the tabs do not change as the
	// task moves.
	if ansi.StringWidth(bar+"  implement · running · #1 ") > w {
		bar = sv.tabBar(true)
	}
	where := string(t.Phase) + " · " + string(t.State)
	if t.Attempt > 0 {
		// "attempt N" where a running implement phase's would fit, else
		// "#N" as in the list: chosen by width alone, so the word does
		// not come and go as the phase changes.
		n := strconv.Itoa(t.Attempt)
		if ansi.StringWidth(bar+"  implement · running · attempt "+n+" ") <= w {
			where += " · attempt " + n
		} else {
			where += " · #" + n
		}
	}
	if gap := w - ansi.StringWidth(bar) - ansi.StringWidth(where) - 1; gap >= 2 {
		return sv.header(tv, "", w), bar + strings.Repeat(" ", gap) + sv.st.dim.Render(where) + " "
	}
	return sv.header(tv, " · "+where, w), fit(bar, w)
}

// header names the selected task, then tail (its phase and state
// when the tab bar has no room for them), then its flag. When the line is
// too long the title gives way, so the flag is never cut off.
func (sv stripView) header(tv coord.TaskView, tail string, w int) string {
	t := tv.Task
	flag := ""
	if f := limitFlag(tv, sv.now); f != "" {
		flag = " ⚑ " + f
	}
	head := t.ID.Short() + " "
	room := w - ansi.StringWidth(head+tail+flag)
	if room < minTitleW {
		// Too narrow to keep everything: the flag is cut last.
		room = max(w-ansi.StringWidth(head+tail)-minFlagW, minTitleW)
	}
	title := strings.TrimRight(padRight(t.Title, room), " ")
	s := sv.st.bold.Render(head+title) + sv.st.dim.Render(tail)
	if flag != "" {
		s += sv.st.warn.Render(flag)
	}
	return fit(s, w)
}

// verdict is the latest verdict, what the task spent and what
// it holds on disk, in one line. When that does not fit, the spend gives up its detail (tokens, then
// models), then the verdict its duration, before anything is cut; the
// Verdict and Events tabs have it all.
func (sv stripView) verdict(tv coord.TaskView, ok bool, w int) string {
	if !ok {
		return fit("", w)
	}
	verdicts := []string{sv.st.dim.Render("verdict · not run yet")}
	if v := tv.Verdict; v != nil {
		verdicts = []string{sv.st.dim.Render("verdict ") + styleVerdict(sv.st, v, verdictLine(*v))}
		if v.Duration > 0 {
			verdicts = append(verdicts, sv.st.dim.Render("verdict ")+styleVerdict(sv.st, v, v.Line()))
		}
	}
	// Disk use comes last and goes first: it is shown only where the
	// whole line fits with it.
	disk := ""
	if tv.Disk.Total() > 0 {
		disk = sv.st.dim.Render(" · disk ") + humanize.IBytes(uint64(tv.Disk.Total()))
	}
	spends := spendForms(tv.Usage, sv.budget)
	if len(spends) == 0 {
		if disk != "" && ansi.StringWidth(verdicts[0]+disk) <= w {
			return fit(verdicts[0]+disk, w)
		}
		return fit(verdicts[0], w)
	}
	for _, v := range verdicts {
		for i, sp := range spends {
			line := v + sv.st.dim.Render(" · spent ") + sp
			if disk != "" && ansi.StringWidth(line+disk) <= w {
				return fit(line+disk, w)
			}
			if ansi.StringWidth(line) <= w {
				return fit(line, w)
			}
			// On a wide pane the token counts may run off the end, as
			// long as the cost and the models and a few counts show.
			if i == 0 && len(spends) > 2 && ansi.StringWidth(v+" · spent "+spends[1])+12 <= w {
				return fit(line, w)
			}
		}
	}
	// Still too long: the verdict's line gives way to the cost, which is
	// short.
	cost := sv.st.dim.Render(" · spent ") + spends[len(spends)-1]
	short := verdicts[len(verdicts)-1]
	if sw := ansi.StringWidth(cost); sw < w-16 {
		short = ansi.Truncate(short, w-sw, "…")
	}
	return fit(short+cost, w)
}

// spendForms are a task's spend from the fullest to the shortest: cost,
// models and tokens; cost and models; cost. None when nothing was reported.
// With [budget] set, the cost names the task's budget ("$0.0300 of $0.05")
// and, once the day's is spent, that placement has stopped.
func spendForms(u coord.Usage, b *coord.BudgetView) []string {
	full := taskUsageLine(u)
	if full == "" && b == nil {
		return nil
	}
	cost := atLeast(fmt.Sprintf("$%.4f", u.CostUSD), u.LowerBound)
	if full == "" {
		full = cost
	}
	if of := budgetOf(b); of != "" {
		full = strings.Replace(full, cost, cost+of, 1)
		cost += of
	}
	out := []string{full}
	if len(u.Models) > 0 {
		out = append(out, cost+" · "+strings.Join(u.Models, "+"))
	}
	return append(out, cost)
}

// renderRight is everything about the selected task: header, tabs, lease
// and verdict strips and the active tab.
func (m *Model) renderRight(l layout) []string {
	tv, ok := m.selected()
	w := l.rightW
	out := make([]string, 0, l.rightH)
	sv := m.strips()
	header, tabs := sv.top(tv, ok, w)
	out = append(out, header, tabs)
	if m.mode == modeReplay && m.rp != nil {
		// The replay takes the lease and verdict strips' rows for its
		// own, so its screen has the pane's whole size.
		out = append(out, m.rp.strips(w, l.leaseH+1)...)
		return append(out, m.rp.screen(w, l.contentH)...)
	}
	out = append(out, sv.lease(tv, ok, w, l.leaseH)...)
	out = append(out, sv.verdict(tv, ok, w))
	var content []string
	switch m.tab {
	case tabLive:
		content = m.panes.live(tv, ok, m.tabs.lastScreen(tv.Task.ID), m.mode == modeScroll, m.snap.Tasks, w, l.contentH)
	case tabBrief:
		content = block(strings.Split(m.tabs.brief.View(), "\n"), w, l.contentH)
	case tabVerdict:
		content = block(strings.Split(m.tabs.verdicts.View(), "\n"), w, l.contentH)
	case tabEvents:
		content = block(strings.Split(m.tabs.events.View(), "\n"), w, l.contentH)
	case tabDiff:
		content = m.dv.render(m.st, w, l.contentH, m.width >= sideBySideFrom, m.mode == modeDiff)
	}
	out = append(out, content...)
	return out
}

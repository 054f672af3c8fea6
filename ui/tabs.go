package ui

import (
	"strconv"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// refreshTabs rebuilds the text of the scrollable tabs from the current
// detail. It runs in Update when the detail or the size changes, never per
// frame.
func (m *Model) refreshTabs() {
	w := max(m.brief.Width(), 1)
	if m.detailID == "" || m.detailID != m.selID {
		m.brief.SetContent(m.st.dim.Render("loading…"))
		m.verdicts.SetContent("")
		m.events.SetContent("")
		return
	}
	if m.detailErr != nil {
		msg := m.st.statusErr.Render("could not read this task: " + m.detailErr.Error())
		m.brief.SetContent(msg)
		m.verdicts.SetContent(msg)
		m.events.SetContent(msg)
		return
	}
	atTop := m.brief.AtTop()
	m.brief.SetContent(m.briefContent(w))
	if atTop {
		m.brief.GotoTop()
	}
	tv, _ := m.selected()
	m.verdicts.SetContent(m.verdictContent(tv.Verdict, m.detail.Verdicts))
	m.events.SetContent(m.eventsContent(w))
	m.events.GotoBottom()
}

// briefContent highlights the brief's section headings and marks the human
// decisions section, which outranks everything after it. Lines are wrapped
// at word boundaries here, to the tab's width, so a word is never split and
// every line of a decision keeps its mark.
func (m *Model) briefContent(w int) string {
	if strings.TrimSpace(m.detail.Brief) == "" {
		return m.st.dim.Render("no brief yet: one is rendered when a session launches")
	}
	mark := m.st.warn.Render("┃ ")
	var out []string
	inDecisions := false
	for _, l := range strings.Split(strings.TrimRight(m.detail.Brief, "\n"), "\n") {
		l = ansiSafe(l)
		switch {
		case strings.HasPrefix(l, "## "):
			inDecisions = strings.HasPrefix(l, task.HeadingDecisions)
			if inDecisions {
				out = append(out, m.st.decisions.Render(fit(l+"  ◆ outranks the plan", w)))
				continue
			}
			for _, part := range wrap(l, w) {
				out = append(out, m.st.heading.Render(part))
			}
		case strings.HasPrefix(l, "### "):
			for _, part := range wrap(l, w) {
				out = append(out, m.st.heading.Render(part))
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

// eventsContent is the ledger, one event per entry, refusals in red with
// the reason's sentence. An entry longer than the tab's width w continues
// on lines indented past its time, so the times stay a clean column.
func (m *Model) eventsContent(w int) string {
	if len(m.detail.Events) == 0 {
		return m.st.dim.Render("no events yet")
	}
	const indent = 9 // "15:04:05 "
	pad := strings.Repeat(" ", indent)
	out := m.sessionsContent(w)
	for _, ev := range m.detail.Events {
		first := wrap(m.eventLine(ev), w)
		out = append(out, first[0])
		if len(first) > 1 {
			rest := strings.Join(first[1:], " ")
			for _, part := range wrap(rest, max(w-indent, 1)) {
				out = append(out, pad+part)
			}
		}
	}
	return strings.Join(out, "\n")
}

func (m *Model) eventLine(ev task.Event) string {
	at := ev.At.In(m.now().Location()).Format("15:04:05")
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
		return m.st.dim.Render(at) + " " + m.st.refusal.Render("REFUSED "+string(ev.Reason)+" · "+s)
	}
	return m.st.dim.Render(at) + " " + padRight(string(ev.Kind), 20) + " " + text
}

// renderTabBar draws the tab names with the active one highlighted.
func (m *Model) renderTabBar(w int) string {
	var b strings.Builder
	for i, name := range tabNames {
		label := " " + string(rune('1'+i)) + " " + name + " "
		if tab(i) == m.tab {
			b.WriteString(m.st.tabActive.Render(label))
		} else {
			b.WriteString(m.st.tabIdle.Render(label))
		}
	}
	if m.mode == modeScroll {
		b.WriteString(m.st.warn.Render(" SCROLL · pgup/pgdn · esc leaves"))
	}
	return fit(b.String(), w)
}

// renderTaskHeader names the selected task and its flag.
func (m *Model) renderTaskHeader(tv coord.TaskView, ok bool, w int) string {
	if !ok {
		return m.st.dim.Render(fit("no task selected", w))
	}
	t := tv.Task
	s := m.st.bold.Render(t.ID.Short()+" "+t.Title) + m.st.dim.Render(" · "+string(t.Phase)+" · "+string(t.State))
	if t.Attempt > 0 {
		s += m.st.dim.Render(" · attempt " + strconv.Itoa(t.Attempt))
	}
	if f := taskFlag(tv); f != "" {
		s += " " + m.st.warn.Render("⚑ "+f)
	}
	return fit(s, w)
}

// renderVerdictStrip is the latest verdict in one line.
func (m *Model) renderVerdictStrip(tv coord.TaskView, ok bool, w int) string {
	if !ok {
		return fit("", w)
	}
	spent := ""
	if u := taskUsageLine(tv.Usage); u != "" {
		spent = m.st.dim.Render(" · spent ") + u
	}
	if tv.Verdict == nil {
		if spent == "" {
			return m.st.dim.Render(fit("verdict · · not run yet", w))
		}
		return fit(m.st.dim.Render("verdict · · not run yet")+spent, w)
	}
	return fit(m.st.dim.Render("verdict ")+m.styleVerdict(tv.Verdict, verdictLine(*tv.Verdict))+spent, w)
}

// renderRight is everything about the selected task: header, tabs, lease
// and verdict strips and the active tab.
func (m *Model) renderRight(l layout) []string {
	tv, ok := m.selected()
	w := l.rightW
	out := make([]string, 0, l.rightH)
	out = append(out, m.renderTaskHeader(tv, ok, w), m.renderTabBar(w))
	out = append(out, m.renderLease(tv, ok, w, l.leaseH)...)
	out = append(out, m.renderVerdictStrip(tv, ok, w))
	var content []string
	switch m.tab {
	case tabLive:
		content = m.renderLive(tv, ok, w, l.contentH)
	case tabBrief:
		content = block(strings.Split(m.brief.View(), "\n"), w, l.contentH)
	case tabVerdict:
		content = block(strings.Split(m.verdicts.View(), "\n"), w, l.contentH)
	case tabEvents:
		content = block(strings.Split(m.events.View(), "\n"), w, l.contentH)
	}
	out = append(out, content...)
	return out
}

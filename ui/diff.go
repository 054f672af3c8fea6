package ui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/diff"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// sideBySideFrom is the terminal width from which the Diff tab shows the
// old and new sides next to each other; below it, one unified column.
const sideBySideFrom = 160

// diffView is the Diff tab: the selected task's change as the engine read
// it from git, laid out in rows for the tab's width, and where the operator
// is in it.
type diffView struct {
	id      task.ID
	scope   diff.Scope
	res     diff.Result
	err     error
	loading bool
	seq     int // the newest request; older answers are dropped
	// rows are res laid out for width w (side says how); rebuilt in
	// Update when the diff, the width or the comments change, never per
	// frame.
	rows []diffRow
	w    int
	side bool
	// top is the first row on screen, cur the row the cursor is on.
	top, cur int
}

// diffMsg is a diff the engine read.
type diffMsg struct {
	id    task.ID
	scope diff.Scope
	seq   int
	res   diff.Result
	err   error
}

// fetchDiff asks the engine for the selected task's diff in the tab's
// scope, off Update: it runs git.
func (m *Model) fetchDiff() tea.Cmd {
	id := m.selID
	if id == "" {
		return nil
	}
	dv := &m.dv
	if dv.id != id {
		*dv = diffView{id: id, scope: dv.scope}
		m.rebuildDiff()
	}
	dv.seq++
	dv.loading = true
	seq, scope := dv.seq, dv.scope
	d, ok := m.eng.(coord.Differ)
	if !ok {
		return func() tea.Msg {
			return diffMsg{id: id, scope: scope, seq: seq, err: fmt.Errorf("this engine cannot show diffs; run `orchestra-tui stop` and start it again with this version")}
		}
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
		defer cancel()
		res, err := d.Diff(ctx, id, coord.DiffQuery{Scope: scope})
		return diffMsg{id: id, scope: scope, seq: seq, res: res, err: err}
	}
}

// take keeps msg when it answers the newest request for the diff's task,
// and reports whether it did (the rows are then laid out again).
func (dv *diffView) take(msg diffMsg) bool {
	if msg.id != dv.id || msg.seq != dv.seq {
		return false // an answer for a task or a request since replaced
	}
	dv.loading = false
	dv.res, dv.err = msg.res, msg.err
	return true
}

// diffFollows reports whether an event may have changed the files of its
// task's diff, which the Diff tab then reads again.
func diffFollows(ev task.Event) bool {
	switch ev.Kind {
	case task.EvSessionExited, task.EvTaskAwaiting, task.EvBranchPushed, task.EvPhaseAdvanced,
		task.EvTaskRequeued, task.EvVerifyFinished, task.EvBranchMerged, task.EvSessionLaunched:
		return true
	}
	return false
}

// toggleScope switches between the whole branch and the last session.
func (dv *diffView) toggleScope() {
	if dv.scope == diff.ScopeSession {
		dv.scope = diff.ScopeBranch
	} else {
		dv.scope = diff.ScopeSession
	}
	dv.top, dv.cur = 0, 0
}

// diffKeyAction is what a key did to the Diff tab, for the root model to
// finish: read the diff again, change mode.
type diffKeyAction int

const (
	diffNotTaken diffKeyAction = iota // not a Diff tab key
	diffTook                          // moved or scrolled; nothing more to do
	diffScope                         // the scope changed: read the diff again
	diffBrowse                        // enter: browse the diff (modeDiff)
	diffLeave                         // esc, q: leave browse mode
	diffHelpKey                       // ?: the help screen
)

// key handles a key on a Diff tab h rows high: the keys every Diff tab
// takes (normal and browse mode), and, browsing, j/k moving the cursor
// line through the diff (normal mode's j/k select tasks).
func (dv *diffView) key(k string, h int, browsing bool) diffKeyAction {
	if browsing {
		switch k {
		case "j", "down":
			dv.move(1, h)
			return diffTook
		case "k", "up":
			dv.move(-1, h)
			return diffTook
		case "g", "home":
			dv.move(-len(dv.rows), h)
			return diffTook
		case "G", "end":
			dv.move(len(dv.rows), h)
			return diffTook
		case "esc", "q":
			return diffLeave
		case "?":
			return diffHelpKey
		}
	} else if k == "enter" {
		if len(dv.rows) == 0 {
			return diffTook
		}
		dv.show(h)
		return diffBrowse
	}
	switch k {
	case "]":
		dv.jump(rowFile, 1, h)
	case "[":
		dv.jump(rowFile, -1, h)
	case "}":
		dv.jump(rowHunk, 1, h)
	case "{":
		dv.jump(rowHunk, -1, h)
	case "v":
		dv.toggleScope()
		return diffScope
	case "J":
		dv.scroll(1, h)
	case "K":
		dv.scroll(-1, h)
	case "pgdown", "space":
		dv.scroll(max(h-1, 1), h)
	case "pgup", "s":
		dv.scroll(-max(h-1, 1), h)
	default:
		return diffNotTaken
	}
	return diffTook
}

// diffKey routes a key on the Diff tab, in normal mode or (browsing) in
// browse mode; it reports whether the tab took msg. In normal mode enter
// browses the diff and the file, hunk, scroll and scope keys work at once;
// j/k keep selecting tasks. Browsing, a key the tab does not move on is
// an action (diffActionKey).
func (m *Model) diffKey(msg tea.KeyPressMsg, browsing bool) (tea.Cmd, bool) {
	switch m.dv.key(msg.String(), m.layout().contentH, browsing) {
	case diffTook:
		return nil, true
	case diffScope:
		return m.fetchDiff(), true
	case diffBrowse:
		m.mode = modeDiff
		return nil, true
	case diffLeave:
		m.mode = modeNormal
		return nil, true
	case diffHelpKey:
		m.mode = modeHelp
		return nil, true
	}
	if browsing {
		return m.diffActionKey(msg), true
	}
	return nil, false
}

// move moves the cursor by n rows, keeping it on screen.
func (dv *diffView) move(n, h int) {
	if len(dv.rows) == 0 {
		return
	}
	dv.cur = min(max(dv.cur+n, 0), len(dv.rows)-1)
	dv.show(h)
}

// show scrolls so the cursor's row is on screen.
func (dv *diffView) show(h int) {
	if dv.cur < dv.top {
		dv.top = dv.cur
	}
	if dv.cur >= dv.top+h {
		dv.top = dv.cur - h + 1
	}
	dv.clamp(h)
}

// scroll moves the view by n rows, taking the cursor along when it would
// leave the screen.
func (dv *diffView) scroll(n, h int) {
	dv.top += n
	dv.clamp(h)
	dv.cur = min(max(dv.cur, dv.top), dv.top+h-1)
	dv.cur = min(max(dv.cur, 0), max(len(dv.rows)-1, 0))
}

func (dv *diffView) clamp(h int) {
	dv.top = min(dv.top, max(len(dv.rows)-h, 0))
	dv.top = max(dv.top, 0)
}

// jump moves to the next (dir 1) or previous (-1) row of kind k and puts
// it at the top of the screen.
func (dv *diffView) jump(k diffRowKind, dir, h int) {
	for i := dv.cur + dir; i >= 0 && i < len(dv.rows); i += dir {
		if dv.rows[i].kind == k {
			dv.cur, dv.top = i, i
			dv.clamp(h)
			return
		}
	}
}

// diffActionKey is what browse mode does with a key it does not move on:
// c comments on the cursor's line, d resolves the comment under the
// cursor, and the task's own keys (a, C) act as in normal mode.
func (m *Model) diffActionKey(msg tea.KeyPressMsg) tea.Cmd {
	dv := &m.dv
	if dv.cur >= len(dv.rows) {
		return nil
	}
	row := dv.rows[dv.cur]
	switch msg.String() {
	case "c":
		a, ok := dv.anchorAt(row)
		if !ok {
			m.setStatus("move to a line of code to comment on it", false)
			return nil
		}
		m.correct.anchor = &a
		m.mode = modeCorrect
		m.correct.in.Reset()
		// The comment's input sits over the bottom of the tab: keep the
		// line it is about above it.
		dv.show(max(m.layout().contentH-len(m.correct.panel(m.st, dv.id, m.width)), 1))
		return m.correct.in.Focus()
	case "d":
		if row.comment == "" {
			m.setStatus("move to a comment to resolve it", false)
			return nil
		}
		return m.do(coord.Command{Kind: coord.CmdResolve, TaskID: dv.id, Text: row.comment})
	case "a", "C":
		tv, ok := m.selected()
		return m.actionKey(msg, tv, ok)
	}
	k := m.keys
	if key.Matches(msg, k.tab1, k.tab2, k.tab3, k.tab4, k.tab5, k.nextTab, k.prevTab) {
		// Another tab: browsing ends and the tab shows, rather than the
		// key doing nothing (after a comment the operator is still here).
		m.mode = modeNormal
		return m.normalKey(msg)
	}
	return nil
}

// anchorAt is the anchor of a code row: its file, line (the new side's
// number, the old side's for a removed line), the line's and its hunk's
// text.
func (dv *diffView) anchorAt(row diffRow) (store.Anchor, bool) {
	if row.kind != rowLine || row.file >= len(dv.res.Files) {
		return store.Anchor{}, false
	}
	f := dv.res.Files[row.file]
	h := f.Hunks[row.hunk]
	l := h.Lines[row.line]
	a := store.Anchor{File: f.Path, Line: l.New, LineText: l.Text, Hunk: h.Text()}
	if l.Kind == diff.Del {
		a.Line, a.Old = l.Old, true
	}
	return a, true
}

// diffTabHints are normal mode's first hints on the Diff tab.
func diffTabHints() []string {
	return []string{"j/k select", "enter browse", "]/[ file", "}/{ hunk", "v branch/session"}
}

// diffBrowseHints are browse mode's hints.
var diffBrowseHints = []string{"j/k line", "c comment", "d resolve", "]/[ file", "}/{ hunk", "C request changes", "esc leave"}

// diffHelp is the help screen's Diff tab group.
func diffHelp() []key.Binding {
	h := func(keys, desc string) key.Binding { return key.NewBinding(key.WithHelp(keys, desc)) }
	return []key.Binding{
		h("enter", "browse: j/k line, esc leaves"),
		h("c d", "(browsing) comment / resolve"),
		h("]/[", "next / previous file"),
		h("}/{", "next / previous hunk"),
		h("J/K", "scroll the diff"),
		h("v", "whole branch / last session"),
	}
}

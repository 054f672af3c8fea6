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
	// anchor is the line a comment being typed is on (modeCorrect).
	anchor *store.Anchor
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

func (m *Model) handleDiff(msg diffMsg) tea.Cmd {
	dv := &m.dv
	if msg.id != dv.id || msg.seq != dv.seq {
		return nil // an answer for a task or a request since replaced
	}
	dv.loading = false
	dv.res, dv.err = msg.res, msg.err
	m.rebuildDiff()
	return nil
}

// diffFollow refetches the diff when the Diff tab shows the task an event
// is about and the event may have changed its files.
func (m *Model) diffFollow(ev task.Event) tea.Cmd {
	if m.tab != tabDiff || ev.TaskID != m.selID {
		return nil
	}
	switch ev.Kind {
	case task.EvSessionExited, task.EvTaskAwaiting, task.EvBranchPushed, task.EvPhaseAdvanced,
		task.EvTaskRequeued, task.EvVerifyFinished, task.EvBranchMerged, task.EvSessionLaunched:
		return m.fetchDiff()
	}
	return nil
}

// toggleDiffScope switches between the whole branch and the last session.
func (m *Model) toggleDiffScope() tea.Cmd {
	if m.dv.scope == diff.ScopeSession {
		m.dv.scope = diff.ScopeBranch
	} else {
		m.dv.scope = diff.ScopeSession
	}
	m.dv.top, m.dv.cur = 0, 0
	return m.fetchDiff()
}

// diffKey handles the keys every Diff tab takes (normal and browse mode);
// it reports whether it took msg.
func (m *Model) diffKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	dv := &m.dv
	h := m.layout().contentH
	switch msg.String() {
	case "]":
		dv.jump(rowFile, 1, h)
	case "[":
		dv.jump(rowFile, -1, h)
	case "}":
		dv.jump(rowHunk, 1, h)
	case "{":
		dv.jump(rowHunk, -1, h)
	case "v":
		return m.toggleDiffScope(), true
	case "J":
		dv.scroll(1, h)
	case "K":
		dv.scroll(-1, h)
	case "pgdown", "space":
		dv.scroll(max(h-1, 1), h)
	case "pgup", "s":
		dv.scroll(-max(h-1, 1), h)
	default:
		return nil, false
	}
	return nil, true
}

// browseKey handles keys in browse mode, where j/k move the cursor line
// through the diff (normal mode's j/k select tasks) and c comments on it.
func (m *Model) browseKey(msg tea.KeyPressMsg) tea.Cmd {
	dv := &m.dv
	h := m.layout().contentH
	switch msg.String() {
	case "j", "down":
		dv.move(1, h)
	case "k", "up":
		dv.move(-1, h)
	case "g", "home":
		dv.move(-len(dv.rows), h)
	case "G", "end":
		dv.move(len(dv.rows), h)
	case "esc", "q":
		m.mode = modeNormal
	case "?":
		m.mode = modeHelp
	default:
		if cmd, ok := m.diffKey(msg); ok {
			return cmd
		}
		return m.diffActionKey(msg)
	}
	return nil
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

// diffTabKey handles the keys the Diff tab takes in normal mode: enter
// browses the diff; the file, hunk, scroll and scope keys work at once. j/k
// keep selecting tasks.
func (m *Model) diffTabKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	if msg.String() == "enter" {
		if len(m.dv.rows) == 0 {
			return nil, true
		}
		m.mode = modeDiff
		m.dv.show(m.layout().contentH)
		return nil, true
	}
	return m.diffKey(msg)
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
		dv.anchor = &a
		m.mode = modeCorrect
		m.correct.Reset()
		// The comment's input sits over the bottom of the tab: keep the
		// line it is about above it.
		dv.show(max(m.layout().contentH-len(m.renderBottomPanel(m.width)), 1))
		return m.correct.Focus()
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

package ui

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"charm.land/lipgloss/v2"
	"github.com/alecthomas/chroma/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/orchestra-tui/orchestra-tui/diff"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// diffRowKind is what a row of the Diff tab shows.
type diffRowKind int

const (
	rowText diffRowKind = iota // the summary, a note, a blank
	rowFile                    // a file's heading
	rowHunk                    // a hunk's @@ line
	rowLine                    // a line of code (side by side: a pair)
)

// diffRow is one row of the Diff tab, rendered to the tab's width but for
// the cursor mark, which View puts in its first cell.
type diffRow struct {
	kind diffRowKind
	text string
	// file and hunk index the result's files and their hunks; line is the
	// index of the row's line in its hunk (for a side-by-side pair, the
	// new side's line when it has one). -1 where the row has none.
	file, hunk, line int
	// comment is the id of the review comment the row shows, if any.
	comment string
}

// gutterW is the width of one line-number column.
const gutterW = 4

// rebuildDiff lays the diff out for the tab's current width. It runs in
// Update (a new diff, a resize), never per frame.
func (m *Model) rebuildDiff() {
	var open []store.Decision
	if m.tabs.detailID == m.dv.id {
		open = m.tabs.detail.Decisions
	}
	l := m.layout()
	m.dv.rebuild(m.st, diffArea{w: max(l.rightW-1, 1), h: l.contentH, side: m.width >= sideBySideFrom}, open) // the first cell is the cursor's
}

// diffArea is what the Diff tab is laid out for: its width less the
// cursor's cell, its height, and whether the terminal is wide enough for
// the two sides next to each other.
type diffArea struct {
	w, h int
	side bool
}

// rebuild lays the diff out for area a, the task's review comments
// (decisions) under their lines.
func (dv *diffView) rebuild(st styles, a diffArea, decisions []store.Decision) {
	w := a.w
	dv.w, dv.side = w, a.side
	dv.rows = dv.rows[:0]
	text := func(s string) {
		dv.rows = append(dv.rows, diffRow{kind: rowText, text: fit(s, w), file: -1, hunk: -1, line: -1})
	}
	switch {
	case dv.id == "":
		text(st.dim.Render("no task selected"))
		return
	case dv.err != nil:
		text(st.statusErr.Render("could not read the diff: ") + ansiSafe(dv.err.Error()))
		return
	case dv.res.Scope == "" && dv.loading:
		text(st.dim.Render("reading the diff from git…"))
		return
	}
	r := dv.res
	if r.Base == "" && r.Head == "" && r.Note != "" {
		// git had nothing to read (no branch yet, or none here): the note
		// is the whole story, not "branch · →" and 0 files changed.
		for _, l := range wrap(ansiSafe(r.Note), w) {
			text(st.warn.Render(l))
		}
		return
	}
	cm := newCommentSet(dv, st, decisions)
	scope := "branch"
	other := "v shows the last session's change"
	if r.Scope == diff.ScopeSession {
		scope, other = "session "+task.ID(r.Session).Short(), "v shows the whole branch"
	}
	head := st.bold.Render(scope) + st.dim.Render(" · "+ansiSafe(r.Base)+" → "+ansiSafe(r.Head))
	text(head)
	text(fmt.Sprintf("%s changed  %s %s", plural(len(r.Files), "file", "files"),
		st.ok.Render("+"+strconv.Itoa(r.Added())), st.bad.Render("−"+strconv.Itoa(r.Removed()))) +
		st.dim.Render("  · "+other))
	if r.Note != "" {
		for _, l := range wrap(ansiSafe(r.Note), w) {
			text(st.warn.Render(l))
		}
	}
	nameW := 0
	for _, f := range r.Files {
		nameW = max(nameW, ansi.StringWidth(fileName(f)))
	}
	nameW = min(nameW, max(w-24, 10))
	for i, f := range r.Files {
		row := "  " + statusLetter(st, f) + " " + padRight(ansiSafe(fileName(f)), nameW) + "  " + counts(st, f)
		dv.rows = append(dv.rows, diffRow{kind: rowText, text: fit(row, w), file: i, hunk: -1, line: -1})
	}
	for i, f := range r.Files {
		text("")
		head := st.heading.Render("▍"+ansiSafe(fileName(f))) + "  " + counts(st, f)
		dv.rows = append(dv.rows, diffRow{kind: rowFile, text: fit(head, w), file: i, hunk: -1, line: -1})
		defer cm.outdated(f.Path, i)
		switch {
		case f.Binary:
			text(st.dim.Render("  binary file: not shown"))
			continue
		case f.TooLarge:
			text(st.dim.Render(fmt.Sprintf("  %d changed lines: too large to show here (git diff shows it)", f.Added+f.Removed)))
			continue
		case len(f.Hunks) == 0:
			text(st.dim.Render("  no lines changed (" + f.Status + ")"))
			continue
		}
		lx := lexerFor(f.Path)
		for j, h := range f.Hunks {
			dv.rows = append(dv.rows, diffRow{kind: rowHunk, text: fit(st.dim.Render(ansiSafe(h.Header())), w), file: i, hunk: j, line: -1})
			if dv.side {
				dv.sideRows(st, lx, cm, i, j, h)
			} else {
				for k, l := range h.Lines {
					dv.rows = append(dv.rows, diffRow{kind: rowLine, text: unifiedLine(lx, l, w), file: i, hunk: j, line: k})
					cm.under(f.Path, &l)
				}
			}
		}
	}
	dv.cur = min(dv.cur, max(len(dv.rows)-1, 0))
	dv.clamp(a.h)
}

// sideRows lays out a hunk side by side: context on both sides, each run
// of removed lines next to the run of added lines that replaced it.
func (dv *diffView) sideRows(st styles, lx chroma.Lexer, cm *commentSet, fi, hi int, h diff.Hunk) {
	half := (dv.w - 1) / 2
	right := dv.w - 1 - half
	sep := st.sep.Render("│")
	add := func(l, r *diff.Line, idx int) {
		dv.rows = append(dv.rows, diffRow{kind: rowLine, text: sideCell(lx, l, half) + sep + sideCell(lx, r, right), file: fi, hunk: hi, line: idx})
		path := dv.res.Files[fi].Path
		cm.under(path, l)
		if r != l {
			cm.under(path, r)
		}
	}
	lines := h.Lines
	for i := 0; i < len(lines); {
		if lines[i].Kind == diff.Context {
			add(&lines[i], &lines[i], i)
			i++
			continue
		}
		d := i
		for i < len(lines) && lines[i].Kind == diff.Del {
			i++
		}
		a := i
		for i < len(lines) && lines[i].Kind == diff.Add {
			i++
		}
		dels, adds := a-d, i-a
		for k := range max(dels, adds) {
			var l, r *diff.Line
			idx := d + k
			if k < dels {
				l = &lines[d+k]
			}
			if k < adds {
				r, idx = &lines[a+k], a+k
			}
			add(l, r, idx)
		}
	}
}

// unifiedLine is one line of the unified layout: both line numbers, the
// sign, then the code on the line's background to the tab's edge.
func unifiedLine(lx chroma.Lexer, l diff.Line, w int) string {
	line, mark, sign := lineBgs(l.Kind)
	g := num(l.Old) + " " + num(l.New) + " "
	return codeCell(lx, g, sign, l, line, mark, w)
}

// sideCell is one side of a side-by-side row: its line number, sign and
// code, or blank where that side has no line.
func sideCell(lx chroma.Lexer, l *diff.Line, w int) string {
	if l == nil {
		return strings.Repeat(" ", w)
	}
	line, mark, sign := lineBgs(l.Kind)
	n := l.New
	if l.Kind == diff.Del {
		n = l.Old
	}
	return codeCell(lx, num(n)+" ", sign, *l, line, mark, w)
}

func codeCell(lx chroma.Lexer, gutter, sign string, l diff.Line, line, mark bg, w int) string {
	body := bgStyles()[line].Render(sign) + highlight(lx, l.Text, l.Marks, line, mark)
	s := dimGutter().Render(gutter) + body
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.Truncate(s, w-1, "") + bgStyles()[line].Render("…")
	}
	return s + bgStyles()[line].Render(strings.Repeat(" ", w-sw))
}

var dimGutter = sync.OnceValue(func() lipgloss.Style { return newStyles().dim })

func lineBgs(k diff.Kind) (line, mark bg, sign string) {
	switch k {
	case diff.Add:
		return bgAdd, bgAddWord, "+"
	case diff.Del:
		return bgDel, bgDelWord, "-"
	}
	return bgNone, bgNone, " "
}

func num(n int) string {
	if n == 0 {
		return strings.Repeat(" ", gutterW)
	}
	s := strconv.Itoa(n)
	if len(s) >= gutterW {
		return s
	}
	return strings.Repeat(" ", gutterW-len(s)) + s
}

func fileName(f diff.File) string {
	if f.OldPath != "" && f.OldPath != f.Path {
		return f.OldPath + " → " + f.Path
	}
	return f.Path
}

func statusLetter(st styles, f diff.File) string {
	switch f.Status {
	case "added":
		return st.ok.Render("A")
	case "deleted":
		return st.bad.Render("D")
	case "renamed":
		return st.warn.Render("R")
	}
	return st.warn.Render("M")
}

func counts(st styles, f diff.File) string {
	c := st.ok.Render("+"+strconv.Itoa(f.Added)) + " " + st.bad.Render("−"+strconv.Itoa(f.Removed))
	switch {
	case f.Binary:
		c = st.dim.Render("binary")
	case f.TooLarge:
		c += st.dim.Render(" (too large to show)")
	}
	return c
}

// render draws the tab's rows from top, with the cursor's mark in the
// first cell while the operator browses.
// side says whether the terminal is wide enough for side-by-side rows,
// browsing whether the operator moves the cursor (modeDiff).
func (dv *diffView) render(st styles, w, h int, side, browsing bool) []string {
	if dv.w != max(w-1, 1) || dv.side != side {
		// Not laid out for this size yet (the resize is in flight).
		return block([]string{st.dim.Render("…")}, w, h)
	}
	out := make([]string, 0, h)
	for i := dv.top; i < len(dv.rows) && len(out) < h; i++ {
		mark := " "
		if browsing && i == dv.cur {
			mark = st.warn.Render("▌")
		}
		out = append(out, mark+dv.rows[i].text)
	}
	return block(out, w, h)
}

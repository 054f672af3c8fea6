package ui

import (
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/diff"
	"github.com/orchestra-tui/orchestra-tui/store"
)

// commentSet places the task's open review comments in the Diff tab while
// its rows are built: each under the line it was made on while that line
// still reads as it did, the rest (their lines changed or gone) as outdated
// at the end of the diff.
type commentSet struct {
	m      *Model
	open   []store.Decision
	placed map[string]bool
}

func (m *Model) newCommentSet() *commentSet {
	cs := &commentSet{m: m, placed: map[string]bool{}}
	if m.detailID != m.dv.id {
		return cs
	}
	for _, d := range m.detail.Decisions {
		if d.Anchor != nil && d.ResolvedAt.IsZero() {
			cs.open = append(cs.open, d)
		}
	}
	return cs
}

// under adds the rows of the comments made on line l of file.
func (cs *commentSet) under(file string, l *diff.Line) {
	if l == nil {
		return
	}
	for _, d := range cs.open {
		a := d.Anchor
		if cs.placed[d.ID] || a.File != file || a.LineText != l.Text {
			continue
		}
		if (a.Old && l.Kind == diff.Del && a.Line == l.Old) || (!a.Old && l.Kind != diff.Del && a.Line == l.New) {
			cs.placed[d.ID] = true
			cs.row(d, "")
		}
	}
}

// outdated adds the comments on file that no line matched.
func (cs *commentSet) outdated(file string, _ int) {
	for _, d := range cs.open {
		if !cs.placed[d.ID] && d.Anchor.File == file {
			cs.placed[d.ID] = true
			cs.row(d, fmt.Sprintf("outdated (%s changed) · ", d.Anchor.Where()))
		}
	}
}

func (cs *commentSet) row(d store.Decision, prefix string) {
	m := cs.m
	dv := &m.dv
	text := m.st.warn.Render("  ┃ ◆ "+prefix) + m.st.bold.Render(ansiSafe(d.Author)) + " " + ansiSafe(coord.CommentWords(d))
	dv.rows = append(dv.rows, diffRow{kind: rowText, text: fit(text, dv.w), file: -1, hunk: -1, line: -1, comment: d.ID})
}

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
	dv     *diffView
	st     styles
	open   []store.Decision
	placed map[string]bool
}

// newCommentSet takes the open comments of decisions, the decisions of the
// diff's task (none when its detail has not come yet).
func newCommentSet(dv *diffView, st styles, decisions []store.Decision) *commentSet {
	cs := &commentSet{dv: dv, st: st, placed: map[string]bool{}}
	for _, d := range decisions {
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
	dv, st := cs.dv, cs.st
	text := st.warn.Render("  ┃ ◆ "+prefix) + st.bold.Render(ansiSafe(d.Author)) + " " + ansiSafe(coord.CommentWords(d))
	dv.rows = append(dv.rows, diffRow{kind: rowText, text: fit(text, dv.w), file: -1, hunk: -1, line: -1, comment: d.ID})
}

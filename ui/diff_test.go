package ui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/diff"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var _ coord.Differ = (*stubEngine)(nil)

func (e *stubEngine) Diff(_ context.Context, id task.ID, q coord.DiffQuery) (diff.Result, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	scope := q.Scope
	if scope == "" {
		scope = diff.ScopeBranch
	}
	r, ok := e.diffs[id][scope]
	if !ok {
		return diff.Result{}, fmt.Errorf("no diff for task %s", id.Short())
	}
	return r, nil
}

// calcPatch is what git writes for the demo's fix: calc.go's bodies
// corrected, a notes file added, a logo replaced.
const calcPatch = `diff --git a/calc.go b/calc.go
index 1111111..2222222 100644
--- a/calc.go
+++ b/calc.go
@@ -1,9 +1,13 @@
 package calc
 
 // Add returns the sum of a and b.
 func Add(a, b int) int {
-	return a - b
+	return a + b
 }
 
 // Mul returns the product of a and b.
-func Mul(a, b int) int { return a + b }
+func Mul(a, b int) int {
+	// The product, for every input.
+	return a * b
+}
diff --git a/NOTES.md b/NOTES.md
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/NOTES.md
@@ -0,0 +1,3 @@
+# Notes
+
+Add and Mul fixed; see calc_test.go.
diff --git a/logo.png b/logo.png
index 4444444..5555555 100644
Binary files a/logo.png and b/logo.png differ
`

// withDiff is everyState with the awaiting-review task's diff: its branch
// and its last session's change.
func withDiff(e *stubEngine) {
	everyState(e)
	id := taskIn(e, task.StateAwaitingReview)
	files := diff.Parse([]byte(calcPatch))
	e.diffs = map[task.ID]map[diff.Scope]diff.Result{id: {
		diff.ScopeBranch:  {Scope: diff.ScopeBranch, Base: "main @ 1a2b3c4d5e", Head: "orchestra/" + string(id) + " @ 5d6e7f8a9b", Files: files},
		diff.ScopeSession: {Scope: diff.ScopeSession, Session: "01JQ8Z4SESSREVIEW0000000", Base: "session SREVIEW0's start @ 1a2b3c4d5e", Head: "session SREVIEW0's end @ 5d6e7f8a9b", Files: files[:1]},
	}}
}

func taskIn(e *stubEngine, s task.State) task.ID {
	for _, tv := range e.snap.Tasks {
		if tv.Task.State == s {
			return tv.Task.ID
		}
	}
	panic("no task in state " + string(s))
}

var diffScenarios = []struct {
	name  string
	drive func(*bundle)
}{
	{"diff", func(b *bundle) { b.selectState(task.StateAwaitingReview).press("5") }},
	{"diff_browse", func(b *bundle) { b.selectState(task.StateAwaitingReview).press("5", "]", "}", "enter", "j", "j", "j") }},
	{"diff_session", func(b *bundle) { b.selectState(task.StateAwaitingReview).press("5", "v") }},
}

func TestDiffGolden(t *testing.T) {
	t.Parallel()
	for _, sc := range diffScenarios {
		for _, sz := range goldenSizes {
			t.Run(fmt.Sprintf("%s_%dx%d", sc.name, sz[0], sz[1]), func(t *testing.T) {
				t.Parallel()
				b := setup(t, withDiff).size(sz[0], sz[1])
				sc.drive(b)
				out := b.view()
				requireFits(t, out, sz[0], sz[1])
				golden.RequireEqual(t, out)
			})
		}
	}
}

// The Diff tab lists both files with their counts, names the binary one
// without dumping it, and colours the hunks: word-level marks on the
// changed words. Side by side from 160 columns, unified below.
func TestDiffTabListsFilesAndColoursHunks(t *testing.T) {
	t.Parallel()
	b := setup(t, withDiff).size(120, 40).selectState(task.StateAwaitingReview).press("5")
	out := b.view()
	plain := ansi.Strip(out)
	require.Contains(t, plain, "3 files changed")
	require.Regexp(t, `M calc\.go +\+5 −2`, plain)
	require.Regexp(t, `A NOTES\.md +\+3 −0`, plain)
	require.Regexp(t, `M logo\.png +binary`, plain)
	require.Contains(t, plain, "@@ -1,9 +1,13 @@")
	require.Contains(t, out, "\x1b[", "the hunks are coloured")
	require.Contains(t, out, "48;2;42;107;60", "the changed word has the brighter added background (#2a6b3c)")
	lines := strings.Split(plain, "\n")
	unified := false
	for _, l := range lines {
		if strings.Contains(l, "-	return a - b") || strings.Contains(l, "-    return a - b") {
			unified = true
		}
	}
	require.True(t, unified, "at 120 columns the removed line has a row of its own:\n%s", plain)

	b.size(200, 50)
	plain = ansi.Strip(b.view())
	require.Regexp(t, `-    return a - b +│ +5 \+    return a \+ b`, plain, "at 200 columns old and new sit side by side")
}

// ]/[ jump between files and }/{ between hunks; in normal mode j/k still
// select tasks, and enter browses the diff, where they move its cursor.
func TestDiffKeys(t *testing.T) {
	t.Parallel()
	b := setup(t, withDiff).size(120, 40).selectState(task.StateAwaitingReview).press("5")
	sel := b.m.selID
	b.press("]")
	require.Equal(t, rowFile, b.m.dv.rows[b.m.dv.cur].kind)
	require.Equal(t, 0, b.m.dv.rows[b.m.dv.cur].file)
	b.press("]")
	require.Equal(t, 1, b.m.dv.rows[b.m.dv.cur].file, "] goes to the next file")
	b.press("[")
	require.Equal(t, 0, b.m.dv.rows[b.m.dv.cur].file, "[ goes back")
	b.press("}")
	require.Equal(t, rowHunk, b.m.dv.rows[b.m.dv.cur].kind)
	b.press("enter")
	require.Equal(t, modeDiff, b.m.mode)
	before := b.m.dv.cur
	b.press("j", "j")
	require.Equal(t, before+2, b.m.dv.cur)
	require.Equal(t, sel, b.m.selID, "in browse mode j/k move the diff's cursor, not the selection")
	b.press("esc")
	require.Equal(t, modeNormal, b.m.mode)
	b.press("j")
	require.NotEqual(t, sel, b.m.selID, "outside browse mode j selects the next task")
}

// The help lists the Diff tab's keys.
func TestHelpListsDiffKeys(t *testing.T) {
	t.Parallel()
	b := setup(t, withDiff).size(120, 40).press("?")
	plain := ansi.Strip(b.view())
	for _, k := range []string{"]/[", "next / previous file", "}/{", "next / previous hunk", "tab/1-5", "whole branch / last session"} {
		require.Contains(t, plain, k)
	}
}

// c on a line of the diff opens a comment anchored there; it is sent as a
// correction with its anchor, shows under its line once the detail holds
// it, and as outdated once that line reads otherwise; C requests changes
// and d resolves the comment under the cursor.
func TestDiffCommentAndRequestChanges(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	withDiff(e)
	b := setupEngine(t, e).size(120, 40).selectState(task.StateAwaitingReview).press("5", "]", "}", "enter")
	for i := 0; i < 100 && (b.m.dv.rows[b.m.dv.cur].kind != rowLine || !strings.Contains(b.m.dv.res.Files[0].Hunks[0].Lines[b.m.dv.rows[b.m.dv.cur].line].Text, "a + b")); i++ {
		b.press("j")
	}
	b.press("c")
	require.Equal(t, modeCorrect, b.m.mode)
	require.Contains(t, ansi.Strip(b.view()), "COMMENT "+b.m.selID.Short()+" on calc.go:5")
	b.typeText("name the constant").press("enter")
	cmds := e.sentCommands()
	require.NotEmpty(t, cmds)
	c := cmds[len(cmds)-1]
	require.Equal(t, coord.CmdCorrect, c.Kind)
	require.NotNil(t, c.Anchor)
	require.Equal(t, "calc.go", c.Anchor.File)
	require.Equal(t, 5, c.Anchor.Line)
	require.Equal(t, "\treturn a + b", c.Anchor.LineText)
	require.Contains(t, c.Anchor.Hunk, "-\treturn a - b\n+\treturn a + b\n")

	// The engine recorded it: the detail now holds it.
	id := b.m.selID
	d := e.details[id]
	d.Task = b.m.snap.Tasks[0].Task
	for _, tv := range b.m.snap.Tasks {
		if tv.Task.ID == id {
			d.Task = tv.Task
		}
	}
	d.Decisions = []store.Decision{{ID: "01JQ8Z4DEC0000000000000001", TaskID: id, Text: "Review comment on calc.go:5 (`return a + b`): name the constant", Author: "ana", Anchor: c.Anchor}}
	b.send(detailMsg{id: id, d: d})
	plain := ansi.Strip(b.view())
	require.Regexp(t, `\+    return a \+ b[^\n]*\n[^\n]*┃ ◆ ana name the constant\s*\n`, plain, "the comment sits under its line, in the reviewer's words")

	moved := *c.Anchor
	moved.LineText = "\treturn b + a"
	d.Decisions[0].Anchor = &moved
	b.send(detailMsg{id: id, d: d})
	require.Contains(t, ansi.Strip(b.view()), "outdated (calc.go:5 changed)")

	require.Equal(t, modeDiff, b.m.mode, "sending the comment goes back to browsing, for the next one")
	b.press("c")
	require.Equal(t, modeCorrect, b.m.mode)
	b.press("enter")
	require.Contains(t, ansi.Strip(b.view()), "the comment is empty")
	b.press("esc")
	require.Equal(t, modeDiff, b.m.mode, "esc on a comment goes back to browsing too")
	for i := 0; i < 100 && b.m.dv.rows[b.m.dv.cur].comment == ""; i++ {
		b.press("j")
	}
	b.press("d")
	c = e.sentCommands()[len(e.sentCommands())-1]
	require.Equal(t, coord.CmdResolve, c.Kind)
	require.Equal(t, "01JQ8Z4DEC0000000000000001", c.Text)

	b.press("esc", "C")
	c = e.sentCommands()[len(e.sentCommands())-1]
	require.Equal(t, coord.CmdRequestChanges, c.Kind)
	require.Equal(t, id, c.TaskID)
}

// A task whose branch git cannot read here shows the note alone, not an
// empty "branch · →" with 0 files changed.
func TestDiffTabWithNothingToReadShowsTheNote(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	everyState(e)
	id := taskIn(e, task.StateAwaitingReview)
	const note = "branch orchestra/x was removed by prune (its work was merged, or dropped by `prune --all`)"
	e.diffs = map[task.ID]map[diff.Scope]diff.Result{id: {diff.ScopeBranch: {Scope: diff.ScopeBranch, Files: []diff.File{}, Note: note}}}
	b := setupEngine(t, e).size(120, 40).selectState(task.StateAwaitingReview).press("5")
	plain := ansi.Strip(b.view())
	require.Contains(t, plain, "was removed by prune (its work was merged, or", "the note, wrapped to the tab")
	require.Contains(t, plain, "dropped by `prune --all`)")
	require.NotContains(t, plain, "0 files changed")
	require.NotContains(t, plain, " → ")
}

// At 80x24 the comment's input covers the bottom of the Diff tab: the line
// the comment is about stays on screen above it.
func TestCommentInputKeepsItsLineInView(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	withDiff(e)
	b := setupEngine(t, e).size(80, 24).selectState(task.StateAwaitingReview).press("5", "enter")
	h := b.m.layout().contentH
	// The cursor on the tab's last row, on a line of code.
	for i := 0; i < 200; i++ {
		dv := b.m.dv
		if dv.cur == dv.top+h-1 && dv.rows[dv.cur].kind == rowLine {
			break
		}
		b.press("j")
	}
	dv := b.m.dv
	require.Equal(t, dv.top+h-1, dv.cur, "the cursor reached the tab's last row")
	line := dv.res.Files[dv.rows[dv.cur].file].Hunks[dv.rows[dv.cur].hunk].Lines[dv.rows[dv.cur].line].Text
	b.press("c")
	require.Equal(t, modeCorrect, b.m.mode)
	plain := ansi.Strip(b.view())
	at := strings.Index(plain, "COMMENT ")
	require.Positive(t, at)
	require.Contains(t, plain[:at], strings.TrimSpace(line), "the commented line is above the input:\n%s", plain)
}

// A tab key while browsing the diff shows that tab (it did nothing): after
// a comment and C the operator is still browsing, and the README's next
// step is a, then 4 for the Events tab.
func TestTabKeyLeavesDiffBrowsing(t *testing.T) {
	t.Parallel()
	e := newStubEngine(testNow)
	withDiff(e)
	b := setupEngine(t, e).size(120, 40).selectState(task.StateAwaitingReview).press("5", "enter")
	require.Equal(t, modeDiff, b.m.mode)
	b.press("4")
	require.Equal(t, modeNormal, b.m.mode)
	require.Equal(t, tabEvents, b.m.tab)
}

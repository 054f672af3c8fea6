package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// calcTestMore is the calc tests with one more, the second file the review
// test's agent changes.
const calcTestMore = project.CalcTest + `
func TestAddNegative(t *testing.T) {
	if got := Add(-2, -3); got != -5 {
		t.Fatalf("Add(-2, -3) = %d, want -5", got)
	}
}
`

// reviewComment is what the operator says on a line of the diff.
const reviewComment = "say why Add is not a method"

// sgrBackground matches an SGR sequence that sets a background colour
// (256-colour or direct), as the Diff tab draws changed lines on.
var sgrBackground = regexp.MustCompile(`\x1b\[[0-9;]*\b48;[25];[0-9;]*m`)

// sgrForeground matches one that sets a foreground colour, as chroma
// colours code.
var sgrForeground = regexp.MustCompile(`\x1b\[[0-9;]*\b38;[25];[0-9;]*m`)

// TestReviewInTheConsole is an operator's review in the real console: a
// scripted agent changes two files; the Diff tab lists both with their
// counts and colours the hunks at 120x40, and puts the sides next to each
// other at 200x50; a comment on a line, then C requests changes; the next
// brief holds the comment with its file and line, the agent got it exactly
// once, the next attempt is green and a approves it. Meanwhile a second
// tmux window runs `events --follow --json`, whose output must be every
// event of the run, with the ids the store holds.
func TestReviewInTheConsole(t *testing.T) {
	parallel(t)
	f := newFixture(t, agent.Script{PaceMS: new(int), Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{
			{Path: "calc.go", Content: project.CalcFixed},
			{Path: "calc_test.go", Content: calcTestMore},
		}}},
	}}, "")
	f.addTask(t, "Fix calc", "implement")
	var rows []struct {
		ID task.ID
	}
	require.NoError(t, json.Unmarshal([]byte(f.orch(t, "status", "--json")), &rows))
	require.Len(t, rows, 1)
	id := rows[0].ID

	tm := f.console(t)
	tm.waitText(90*time.Second, "Fix calc")

	// The second terminal follows the engine the console started until
	// the task is approved. Live events are only those after it connects,
	// so it starts --since the ledger's first event (the task added before
	// the console): the engine replays the rest from the store first,
	// whenever the follower comes in, and then streams the live ones.
	follow := filepath.Join(t.TempDir(), "follow.jsonl")
	followDone := follow + ".done"
	tm.run("new-window", "-d", "-t", "main", "cd "+shellQuote(f.root)+" && "+shellQuote(f.bin)+
		" events --follow --json --since 1 --until completed >"+shellQuote(follow)+" 2>"+shellQuote(follow+".err")+
		"; echo $? >"+shellQuote(followDone+".tmp")+" && mv "+shellQuote(followDone+".tmp")+" "+shellQuote(followDone)+"; exec sleep 3600")

	// The diff at 120x40: both files with their counts, the hunks in
	// colour, one column.
	tm.waitText(90*time.Second, "1 awaiting review")
	tm.keys("5")
	s := tm.waitText(30*time.Second, "2 files changed", "calc_test.go", "Add(-2, -3)")
	for _, fc := range []struct{ path, old, new string }{
		{"calc.go", project.CalcBroken, project.CalcFixed},
		{"calc_test.go", project.CalcTest, calcTestMore},
	} {
		add, del := numstat(t, fc.old, fc.new)
		counts := regexp.MustCompile(`M ` + regexp.QuoteMeta(fc.path) + ` +\+` + strconv.Itoa(add) + ` −` + strconv.Itoa(del) + `\b`)
		require.Regexp(t, counts, s, "the Diff tab lists %s with +%d −%d:\n%s", fc.path, add, del, s)
	}
	colours := tm.colourScreen()
	added := colouredLineWith(colours, "return a + b")
	removed := colouredLineWith(colours, "return a - b")
	require.Regexp(t, sgrBackground, added, "the added line is drawn on a background colour:\n%q", added)
	require.Regexp(t, sgrBackground, removed, "the removed line is drawn on a background colour:\n%q", removed)
	require.Regexp(t, sgrForeground, added, "the code is highlighted:\n%q", added)
	require.NotEqual(t, sgrBackground.FindString(added), sgrBackground.FindString(removed), "added and removed lines differ in colour")

	// At 200x50 the old side stands beside the new one.
	tm.resize(200, 50)
	tm.waitScreen("the sides next to each other", 30*time.Second, func(s string) bool {
		pair := lineWith(s, "return a - b")
		i, j := strings.Index(pair, "return a - b"), strings.Index(pair, "return a + b")
		return i >= 0 && j > i && strings.Contains(pair[i:j], "│")
	})

	// A comment on the fixed line, then request changes.
	tm.keys("Enter")
	diffCursorTo(tm, "return a + b")
	tm.answer("c", reviewComment, 10*time.Second, "COMMENT "+id.Short()+" on calc.go:5")
	tm.waitScreen("the comment under its line", 10*time.Second, func(s string) bool {
		return strings.Contains(lineWith(s, "◆ operator"), reviewComment)
	})
	tm.keys("C")
	tm.waitText(10*time.Second, "back to implement with 1 open comment")

	// The next attempt runs, green, and waits for review again.
	f.waitEvents(t, 120*time.Second, "a second verdict awaiting review", func(evs []headless.Record) bool {
		return count(evs, task.EvTaskAwaiting) == 2
	})
	tm.waitText(30*time.Second, "1 awaiting review")
	briefs, err := filepath.Glob(filepath.Join(f.record, "brief-implement-*.md"))
	require.NoError(t, err)
	require.Len(t, briefs, 2, "one brief per implement session")
	second, err := os.ReadFile(filepath.Join(f.record, "brief-implement-1-2.md"))
	require.NoError(t, err, "the second session is the phase's first attempt again: no attempt charged")
	text := string(second)
	at := strings.Index(text, task.HeadingDecisions)
	require.GreaterOrEqual(t, at, 0, "the brief has its decisions:\n%s", text)
	decisions := text[at:]
	if end := strings.Index(decisions[len(task.HeadingDecisions):], "\n## "); end >= 0 {
		decisions = decisions[:len(task.HeadingDecisions)+end]
	}
	require.Contains(t, decisions, "Review comment on calc.go:5 (`func Add(a, b int) int { return a + b }`): "+reviewComment,
		"the comment, with its file and line, is a current human decision")
	inputs, err := agent.ReadInputLog(f.record)
	require.NoError(t, err)
	got := 0
	for _, in := range inputs {
		got += strings.Count(in.Text, reviewComment)
	}
	require.Equal(t, 1, got, "the agent received the comment exactly once: %+v", inputs)

	// Approve.
	tm.keys("a")
	tm.waitText(10*time.Second, "APPROVED "+id.Short())

	// The follower ended at the approval, having printed every event of
	// the run so far as the store holds it.
	waitFile(t, followDone, 30*time.Second)
	status, err := os.ReadFile(followDone)
	require.NoError(t, err)
	errOut, _ := os.ReadFile(follow + ".err")
	require.Equal(t, "0", strings.TrimSpace(string(status)), "events --follow ended at the approval: %s", errOut)
	followed := readRecords(t, follow)
	ledger := f.ledger(t)
	last := -1
	for i, r := range ledger {
		if r.Kind == task.EvTaskCompleted {
			last = i
		}
	}
	require.GreaterOrEqual(t, last, 0, "the ledger has the approval")
	require.Equal(t, task.EvTaskAdded, ledger[0].Kind)
	want := ledger[1 : last+1]
	require.Equal(t, brief(want), brief(followed), "events --follow printed the store's events, in order, with their ids")
	sessions := 0
	for i, r := range followed {
		require.Equal(t, id, r.Task, "the real task id")
		if r.Kind == task.EvSessionLaunched {
			require.NotEmpty(t, r.Session, "a launch names its real session")
			sessions++
		}
		if r.Seq != 0 {
			// Replayed from the store; the live ones carry none (the
			// store numbers an event as it writes it).
			require.Equal(t, want[i].Seq, r.Seq)
		}
	}
	require.Equal(t, 2, sessions, "both implement sessions")
}

// diffCursorTo moves the Diff tab's cursor (browse mode, enter) down to
// the first row holding text, a key at a time as a person would.
func diffCursorTo(tm *tmuxTerm, text string) {
	tm.t.Helper()
	for range 60 {
		s := tm.screen()
		if strings.Contains(lineWith(s, "▌"), text) {
			return
		}
		before := lineWith(s, "▌")
		tm.keys("j")
		tm.waitScreen("the diff's cursor to move from "+before, 10*time.Second, func(s string) bool { return lineWith(s, "▌") != before })
	}
	tm.t.Fatalf("the diff's cursor never reached %q:\n%s", text, tm.screen())
}

// numstat is git's count of the lines added and removed from old to new.
func numstat(t *testing.T, old, new string) (add, del int) {
	t.Helper()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(a, []byte(old), 0o644))
	require.NoError(t, os.WriteFile(b, []byte(new), 0o644))
	out, _ := exec.Command("git", "diff", "--no-index", "--numstat", a, b).Output() // exit 1: they differ
	fields := strings.Fields(string(out))
	require.GreaterOrEqual(t, len(fields), 2, "git diff --numstat: %q", out)
	add, err := strconv.Atoi(fields[0])
	require.NoError(t, err)
	del, err = strconv.Atoi(fields[1])
	require.NoError(t, err)
	return add, del
}

// lineWith is the first line of s that contains sub, or "".
func lineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			return l
		}
	}
	return ""
}

// colouredLineWith is the first line of the coloured screen s whose text
// contains sub, with its escape sequences.
func colouredLineWith(s, sub string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(ansi.Strip(l), sub) {
			return l
		}
	}
	return ""
}

// ledger is the store's events, as `events --json` prints them.
func (f fixture) ledger(t *testing.T) []headless.Record {
	t.Helper()
	cmd := exec.Command(f.bin, "events", "--json")
	cmd.Dir = f.root
	out, err := cmd.Output()
	require.NoError(t, err, "events --json")
	return parseRecords(t, out)
}

// waitEvents reads the ledger until ok holds for it.
func (f fixture) waitEvents(t *testing.T, d time.Duration, what string, ok func([]headless.Record) bool) {
	t.Helper()
	var evs []headless.Record
	if !poll(d, func() bool { evs = f.ledger(t); return ok(evs) }) {
		t.Fatalf("waited %s for %s; the ledger:\n%s", d, what, strings.Join(brief(evs), "\n"))
	}
}

func readRecords(t *testing.T, path string) []headless.Record {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return parseRecords(t, data)
}

// parseRecords reads JSON lines, keeping the events.
func parseRecords(t *testing.T, data []byte) []headless.Record {
	t.Helper()
	var out []headless.Record
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	for sc.Scan() {
		var r headless.Record
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "a JSON line: %s", sc.Text())
		if r.Type == "event" {
			out = append(out, r)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// brief is the records as comparable lines: task, session, kind, reason
// and text.
func brief(rs []headless.Record) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = string(r.Task) + " " + r.Session + " " + string(r.Kind) + " " + string(r.Reason) + " " + r.Text
	}
	return out
}

func count(rs []headless.Record, k task.Kind) int {
	n := 0
	for _, r := range rs {
		if r.Kind == k {
			n++
		}
	}
	return n
}

// waitFile waits until path exists.
func waitFile(t *testing.T, path string, d time.Duration) {
	t.Helper()
	if !poll(d, func() bool { _, err := os.Stat(path); return err == nil }) {
		t.Fatalf("waited %s for %s", d, path)
	}
}

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/handoff"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
)

// keys is what a handoff could carry to be typed into a pane as keys: a
// lone \r (a submit), ^C, ^D and a paste start.
const keys = "\rrm -rf ~\r\x03\x04\x1b[200~"

// rewritten writes the exported handoff file again with edit applied,
// sealed so that it parses.
func rewritten(t *testing.T, file string, edit func(*handoff.Document)) string {
	t.Helper()
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	d, err := handoff.Parse(data)
	require.NoError(t, err)
	edit(&d)
	require.NoError(t, d.Seal())
	out, err := json.Marshal(d)
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "edited.json")
	require.NoError(t, os.WriteFile(f, out, 0o600))
	return f
}

// `run --resume` of a handoff whose title, goal and decisions hold OSC 52,
// a clear screen, a lone \r and ^C prints none of them, and stores none of
// them for a brief to type.
func TestResumeOfAHostileHandoffPrintsAndStoresNoEscape(t *testing.T) {
	t.Parallel()
	a, _, file := exported(t)
	f := rewritten(t, file, func(d *handoff.Document) {
		d.Task.Title = hostile
		d.Task.Goal += keys + hostile
		d.Decisions = append(d.Decisions, handoff.Decision{ID: "D1", Text: "use ints" + keys + hostile, Author: "op\x1b[2J", At: d.ExportedAt})
		d.Verdict = &handoff.Verdict{Status: "error", Line: "red\x1b]52;c;eA==\x07"}
	})
	b := filepath.Join(t.TempDir(), "b")
	require.NoError(t, project.Git(filepath.Dir(b), "clone", "-q", a, b))

	// The run ends at once, non-zero: no slot runs the task's harness.
	_, stdout, stderr := cli(t, "run", "-C", b, "--resume", f, "--headless")
	require.Contains(t, stdout, "Resumed task", stderr)
	requireClean(t, stdout)
	requireClean(t, stderr)
	require.Contains(t, stdout, "(Fix calc done)")

	ts := tasksIn(t, b)
	require.Len(t, ts, 1)
	require.Equal(t, "Fix calc done", ts[0].Title)
	require.NotContains(t, ts[0].Goal, "\r")
	requireNoKeys(t, ts[0].Goal)
	st, err := sqlite.Open(sqlite.DefaultPath(b))
	require.NoError(t, err)
	defer st.Close()
	ds, err := st.DecisionList(context.Background(), ts[0].ID)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	requireNoKeys(t, ds[0].Text)
	require.Equal(t, "op", ds[0].Author)
	require.True(t, strings.HasPrefix(ds[0].Text, "use ints\nrm -rf ~\n"), "%q", ds[0].Text)
}

// A 10 MB title is refused with its limit, from a handoff file and from
// `add --file`, and nothing is created.
func TestATenMegabyteTitleIsRefusedWithItsLimit(t *testing.T) {
	t.Parallel()
	a, _, file := exported(t)
	huge := strings.Repeat("t", 10<<20)
	f := rewritten(t, file, func(d *handoff.Document) { d.Task.Title = huge })
	b := filepath.Join(t.TempDir(), "b")
	require.NoError(t, project.Git(filepath.Dir(b), "clone", "-q", a, b))
	code, _, stderr := cli(t, "run", "-C", b, "--resume", f, "--headless")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "task.title: is 10485760 bytes, over the limit of 1024 bytes for a title")
	require.Less(t, len(stderr), 4096, "the refusal does not repeat the title")
	require.Empty(t, tasksIn(t, b))

	// A task file is at most 4 MB: a 10 MB one is refused for that.
	root := calcRepo(t)
	tf := filepath.Join(t.TempDir(), "task.json")
	data, err := json.Marshal(map[string]string{"title": huge[:2<<20], "goal": "g", "verify": "true"})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(tf, data, 0o600))
	start := time.Now()
	code, _, stderr = cli(t, "add", "-C", root, "--file", tf)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "the task's title is 2097152 bytes, over its limit of 1024 bytes")
	require.Less(t, time.Since(start), time.Minute)
}

// requireNoKeys fails if s holds anything a pane would read as a key or a
// terminal obey.
func requireNoKeys(t *testing.T, s string) {
	t.Helper()
	require.False(t, strings.ContainsAny(s, "\x1b\x07\x03\x04\r\u009b"), "%q", s)
}

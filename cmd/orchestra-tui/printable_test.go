package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// hostile holds what a task title or a correction could carry to the
// operator's terminal: a clipboard write (OSC 52), a clear screen, a
// window title, a full reset and an 8-bit CSI.
const hostile = "Fix\x1b]52;c;cm0gLXJmIH4K\x07 calc\x1b[2J\x1b[H\x1b]0;pwned\x1b\\\x1bc\u009b31m done"

// status and headless output never pass escape sequences from task text to
// the terminal: the title is printed without them, and its words survive.
func TestStatusAndHeadlessOutputAreSanitised(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	// No slot runs the task's harness, so the headless run comes to rest
	// at once, after printing the task's events.
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte("[[slots]]\nname = \"s\"\nharness = \"scripted\"\n"), 0o644))
	code, _, stderr := cli(t, "add", "-C", root, "--title", hostile, "--goal", "g", "--verify", "true", "--harness", "shell")
	require.Equal(t, 0, code, stderr)
	code, _, stderr = cli(t, "correct", "-C", root, string(tasksIn(t, root)[0].ID), "stop\x1b]52;c;eA==\x07 now\x1b[2J")
	require.Equal(t, 0, code, stderr)

	code, stdout, stderr := cli(t, "status", "-C", root)
	require.Equal(t, 0, code, stderr)
	requireClean(t, stdout)
	require.Contains(t, stdout, "Fix calc done")

	// The headless run prints what happens from its start (the events of
	// an add or a correction are in headless's own test); its lines and its
	// verdict summary are clean too.
	_, stdout, stderr = cli(t, "run", "--headless", "-C", root)
	requireClean(t, stdout)
	requireClean(t, stderr)
	require.Contains(t, stdout, "verdict")
}

func requireClean(t *testing.T, out string) {
	t.Helper()
	require.NotContains(t, out, "\x1b", "an escape reached the terminal:\n%q", out)
	require.NotContains(t, out, "\x07")
	require.NotContains(t, out, "\u009b")
	require.False(t, strings.ContainsAny(out, "\x00\x08\x0b\x0c\x0e\x0f\x7f"))
}

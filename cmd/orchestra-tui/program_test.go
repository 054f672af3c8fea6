package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// With no claude on PATH, add warns, naming the program and what to
// install, and still adds the task; a headless run leases nothing, refuses
// once (its verdict line says why the task waits for claude), and charges
// no attempt. Not parallel: it sets PATH, to one that holds git and
// nothing else.
func TestAddAndRunWithTheHarnessProgramMissing(t *testing.T) {
	git, err := exec.LookPath("git")
	require.NoError(t, err)
	bin := t.TempDir()
	require.NoError(t, os.Symlink(git, filepath.Join(bin, "git")))
	t.Setenv("PATH", bin)
	root := calcRepo(t)

	code, stdout, stderr := cli(t, "add", "-C", root, "--harness", "claude", "--goal", "g", "--verify", "true")
	require.Equal(t, 0, code, stderr)
	require.Len(t, strings.TrimSpace(stdout), 26, "the task is added")
	require.Contains(t, stderr, `warning: The program "claude" of harness claude is not on the PATH its sessions get on this machine; install it (npm install -g @anthropic-ai/claude-code).`)

	code, stdout, stderr = cli(t, "run", "--headless", "-C", root)
	require.Equal(t, 1, code, "no green verdict: %s%s", stdout, stderr)
	out := stdout + stderr
	// Said once as the refusal, and once more by the verdict line, which
	// says why the task is held.
	require.Equal(t, 1, strings.Count(out, "refusal:program-missing"), out)
	require.Equal(t, 2, strings.Count(out, `The program "claude" of harness claude is not on the PATH`), out)
	require.Contains(t, out, `⚑ Waiting for its program: The program "claude"`, out)
	require.NotContains(t, out, "leased", out)

	code, stdout, stderr = cli(t, "status", "-C", root, "--json")
	require.Equal(t, 0, code, stderr)
	var rows []struct {
		State   string
		Attempt int
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows), stdout)
	require.Len(t, rows, 1)
	require.Equal(t, "queued", rows[0].State)
	require.Zero(t, rows[0].Attempt, "no attempt charged")
}

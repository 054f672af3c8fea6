package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
)

// A repository whose store was deleted: status, engines, handoff export,
// approve and prune each say there is no store, and none of them makes a
// fresh empty one that would hide the loss.
func TestReadCommandsNeverCreateAStore(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	code, stdout, stderr := cli(t, "add", "-C", root, "--title", "T", "--goal", "G", "--verify", "true", "--harness", "shell")
	require.Equal(t, 0, code, stderr)
	id := strings.TrimSpace(stdout)
	db := sqlite.DefaultPath(root)
	for _, f := range []string{db, db + "-wal", db + "-shm"} {
		require.NoError(t, os.RemoveAll(f))
	}

	code, stdout, stderr = cli(t, "status", "-C", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "no tasks: no store in this repository: "+db+" does not exist")
	code, stdout, _ = cli(t, "status", "-C", root, "--json")
	require.Equal(t, 0, code)
	require.Equal(t, "[]\n", stdout)
	code, stdout, _ = cli(t, "engines", "-C", root)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "no engines: no store in this repository")
	for _, args := range [][]string{
		{"handoff", "export", id, "-C", root, "--out", filepath.Join(t.TempDir(), "h.json")},
		{"approve", "-C", root, id},
		{"prune", "-C", root},
	} {
		code, _, stderr = cli(t, args...)
		require.Equal(t, 1, code, args)
		require.Contains(t, stderr, "no store in this repository", args)
	}
	require.NoFileExists(t, db)
}

package main

import (
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/engine"
)

// listenAt leaves a unix socket where an engine of root serves.
func listenAt(t *testing.T, root string) {
	t.Helper()
	p := engine.PathsFor(root)
	require.NoError(t, os.MkdirAll(p.Dir, 0o700))
	ln, err := net.Listen("unix", p.Socket)
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
}

// The root a command dials without git is the one git names: the nearest
// .git at or above the directory (a worktree's .git file included), and
// only when an engine's socket is there.
func TestLiveEngineRootFindsTheWorkTreeWithoutGit(t *testing.T) {
	root := calcRepo(t)
	sub := filepath.Join(root, "a", "b")
	require.NoError(t, os.MkdirAll(sub, 0o755))

	_, ok := liveEngineRoot(sub)
	require.False(t, ok, "no engine's socket: the command opens the repository through git")

	listenAt(t, root)
	got, ok := liveEngineRoot(sub)
	require.True(t, ok)
	require.Equal(t, root, got)

	// A worktree has a .git file: its own root, not the main checkout's.
	wt := filepath.Join(root, "wt")
	require.NoError(t, os.MkdirAll(wt, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wt, ".git"), []byte("gitdir: elsewhere\n"), 0o644))
	_, ok = liveEngineRoot(wt)
	require.False(t, ok, "the worktree's own root has no engine")

	// A plain file where the socket should be is no engine.
	other := calcRepo(t)
	p := engine.PathsFor(other)
	require.NoError(t, os.MkdirAll(p.Dir, 0o700))
	require.NoError(t, os.WriteFile(p.Socket, nil, 0o600))
	_, ok = liveEngineRoot(other)
	require.False(t, ok)

	// git's own location variables decide where the repository is: git does.
	t.Setenv("GIT_DIR", filepath.Join(root, ".git"))
	_, ok = liveEngineRoot(sub)
	require.False(t, ok)
}

package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// The store holds everything the agents printed and every correction: its
// directory is created 0700 and the database and its WAL files are 0600.
func TestStoreIsPrivateByDefault(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	st, err := Open(DefaultPath(root))
	require.NoError(t, err)
	defer st.Close()
	tk := sampleTask("private")
	require.NoError(t, st.TaskInsert(context.Background(), tk, task.Event{ID: task.NewULID(tk.CreatedAt), TaskID: tk.ID, Kind: task.EvTaskAdded, At: tk.CreatedAt}))

	fi, err := os.Stat(filepath.Join(root, task.StateDir))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), ".orchestra/")
	for _, name := range []string{"orchestra.db", "orchestra.db-wal", "orchestra.db-shm"} {
		fi, err := os.Stat(filepath.Join(root, task.StateDir, name))
		require.NoError(t, err, name)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), name)
	}
}

// A state directory left wider by an older version is narrowed on open.
func TestStoreNarrowsAnOpenStateDirectory(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, task.StateDir)
	require.NoError(t, os.Mkdir(dir, 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	st, err := Open(DefaultPath(root))
	require.NoError(t, err)
	defer st.Close()
	fi, err := os.Stat(dir)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

package session

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A recording holds everything an agent printed: it and the directories
// made for it are private to their owner.
func TestRecordingIsPrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "runs", "T1", "s.cast")
	f, err := CreateCastFile(path, 80, 24, nil)
	require.NoError(t, err)
	_, _ = f.Write([]byte("secret-token"))
	require.NoError(t, f.Close())
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	for _, dir := range []string{filepath.Dir(path), filepath.Dir(filepath.Dir(path))} {
		fi, err := os.Stat(dir)
		require.NoError(t, err)
		require.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), dir)
	}
}

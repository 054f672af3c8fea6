package jail

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// An agent turns its state directory into a symlink to a directory outside
// the worktree: every operation through it is an escape, and the file
// outside is neither read nor removed.
func TestSymlinkedDirectoryIsAnEscapeAndTouchesNothing(t *testing.T) {
	t.Parallel()
	wt, outside := t.TempDir(), t.TempDir()
	done := filepath.Join(outside, "done")
	require.NoError(t, os.WriteFile(done, []byte("x"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(wt, ".orchestra")))
	d, err := Open(wt)
	require.NoError(t, err)
	defer d.Close()

	require.ErrorIs(t, d.Remove(".orchestra/done"), ErrEscape)
	_, err = d.Stat(".orchestra/done")
	require.ErrorIs(t, err, ErrEscape)
	_, err = d.ReadFile(".orchestra/done", 10)
	require.ErrorIs(t, err, ErrEscape)
	require.ErrorIs(t, d.WriteFile(".orchestra/brief.md", []byte("x"), 0o600), ErrEscape)
	require.ErrorIs(t, d.MkdirAll(".orchestra/sub", 0o700), ErrEscape)
	_, err = d.ReadDir(".orchestra")
	require.ErrorIs(t, err, ErrEscape)
	require.ErrorIs(t, d.Remove("../"+filepath.Base(outside)+"/done"), ErrEscape)

	_, err = os.Stat(done)
	require.NoError(t, err, "the file outside the worktree must survive")
	_, err = os.Stat(filepath.Join(outside, "brief.md"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// A symlink that stays inside the tree is followed; removing a symlink
// removes the link, never its target.
func TestInsideSymlinkIsFollowedAndRemovedItself(t *testing.T) {
	t.Parallel()
	wt := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(wt, "real"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(wt, "real", "f"), []byte("hi"), 0o600))
	require.NoError(t, os.Symlink("real", filepath.Join(wt, "link")))
	d, err := Open(wt)
	require.NoError(t, err)
	defer d.Close()
	data, err := d.ReadFile("link/f", 10)
	require.NoError(t, err)
	require.Equal(t, "hi", string(data))
	require.NoError(t, d.Remove("link"))
	_, err = os.Stat(filepath.Join(wt, "real", "f"))
	require.NoError(t, err)
}

// ReadFile refuses a final symlink, a FIFO (without blocking), a directory
// and a file over its limit.
func TestReadFileRefusesWhatIsNotABoundedRegularFile(t *testing.T) {
	t.Parallel()
	wt := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(wt, "big"), make([]byte, 11), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(wt, "ok"), make([]byte, 10), 0o600))
	require.NoError(t, os.Symlink("ok", filepath.Join(wt, "link")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(wt, "fifo"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(wt, "dir"), 0o700))
	d, err := Open(wt)
	require.NoError(t, err)
	defer d.Close()

	_, err = d.ReadFile("big", 10)
	require.ErrorIs(t, err, ErrTooLarge)
	data, err := d.ReadFile("ok", 10)
	require.NoError(t, err)
	require.Len(t, data, 10)
	for _, name := range []string{"link", "fifo", "dir"} {
		_, err = d.ReadFile(name, 10)
		require.ErrorIs(t, err, ErrNotRegular, name)
	}
}

// ReadRegular, for files named by the operator: a FIFO and /dev/zero are
// refused at once; a file over the limit is refused without reading it all.
func TestReadRegularRefusesDevicesFIFOsAndOversize(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err := ReadRegular(fifo, 1<<20)
	require.ErrorIs(t, err, ErrNotRegular)
	_, err = ReadRegular("/dev/zero", 1<<20)
	require.ErrorIs(t, err, ErrNotRegular)
	_, err = ReadRegular(dir, 1<<20)
	require.ErrorIs(t, err, ErrNotRegular)
	big := filepath.Join(dir, "big")
	require.NoError(t, os.WriteFile(big, make([]byte, 100), 0o600))
	_, err = ReadRegular(big, 99)
	require.ErrorIs(t, err, ErrTooLarge)
	data, err := ReadRegular(big, 100)
	require.NoError(t, err)
	require.Len(t, data, 100)
}

// LimitReader passes up to max bytes and then fails by name.
func TestLimitReader(t *testing.T) {
	t.Parallel()
	f, err := os.Open("/dev/zero")
	require.NoError(t, err)
	defer f.Close()
	buf := make([]byte, 64)
	r := LimitReader("zero", f, 100)
	total := 0
	for {
		n, err := r.Read(buf)
		total += n
		if err != nil {
			require.True(t, errors.Is(err, ErrTooLarge), err)
			break
		}
	}
	require.Equal(t, 100, total)
}

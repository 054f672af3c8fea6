package dirwatch

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// wait returns once s is woken, or fails the test after a minute.
func wait(t *testing.T, s *Sub) {
	t.Helper()
	select {
	case <-s.C():
	case <-time.After(time.Minute):
		t.Fatal("no change was reported")
	}
}

// takeUntil takes s's changes until one names path.
func takeUntil(t *testing.T, s *Sub, path string) {
	t.Helper()
	for {
		wait(t, s)
		changes, lost := s.Take()
		require.False(t, lost)
		for _, c := range changes {
			if c.Name == path {
				return
			}
		}
	}
}

// Two subscribers of one directory and one of another share one inotify
// instance; each hears only its directories; the kernel's watch of a
// directory outlives its first subscriber and ends with its last.
func TestSubscribersShareOneInstance(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	s1, err := New(true)
	require.NoError(t, err)
	s2, err := New(true)
	require.NoError(t, err)
	s3, err := New(true)
	require.NoError(t, err)
	require.NoError(t, s1.Add(a))
	require.NoError(t, s2.Add(a))
	require.NoError(t, s2.Add(a)) // twice is harmless
	require.NoError(t, s3.Add(b))
	require.Equal(t, 1, Instances())

	fa := filepath.Join(a, "x")
	require.NoError(t, os.WriteFile(fa, []byte("1"), 0o600))
	takeUntil(t, s1, fa)
	takeUntil(t, s2, fa)
	select {
	case <-s3.C():
		changes, _ := s3.Take()
		require.Empty(t, changes, "a write in another directory reached s3")
	default:
	}

	s1.Close()
	require.NoError(t, os.WriteFile(fa, []byte("2"), 0o600))
	takeUntil(t, s2, fa) // still watched for s2
	s2.Close()
	watcher.mu.Lock()
	require.False(t, watcher.added[a], "the kernel's watch outlived its last subscriber")
	watcher.mu.Unlock()
	s3.Close()
}

// A directory removed and made again under its name is watched again for
// its next subscriber (the kernel dropped the first watch with it).
func TestRemovedDirectoryIsWatchedAnew(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "state")
	require.NoError(t, os.Mkdir(dir, 0o700))
	s1, err := New(true)
	require.NoError(t, err)
	defer s1.Close()
	require.NoError(t, s1.Add(dir))
	require.NoError(t, os.Remove(dir))
	takeUntil(t, s1, dir)

	require.NoError(t, os.Mkdir(dir, 0o700))
	s2, err := New(true)
	require.NoError(t, err)
	defer s2.Close()
	require.NoError(t, s2.Add(dir))
	f := filepath.Join(dir, "done")
	require.NoError(t, os.WriteFile(f, nil, 0o600))
	takeUntil(t, s2, f)
}

// A subscriber that does not look for a long time holds a bounded list:
// past maxPending changes it is told to look at everything instead.
func TestPendingIsBounded(t *testing.T) {
	dir := t.TempDir()
	s, err := New(true)
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Add(dir))
	f := filepath.Join(dir, "f")
	fh, err := os.Create(f)
	require.NoError(t, err)
	defer fh.Close()
	for {
		_, err := fh.Write([]byte("x"))
		require.NoError(t, err)
		s.mu.Lock()
		over, n := s.overflow, len(s.pending)
		s.mu.Unlock()
		require.LessOrEqual(t, n, maxPending)
		if over {
			break
		}
	}
	changes, lost := s.Take()
	require.True(t, lost)
	require.Empty(t, changes)
}

// Package jail confines the console's file work to one directory tree (a
// task's worktree) and bounds every file the console reads.
//
// An agent owns its worktree and can turn any path in it into a symlink. So
// every path the console reads, writes, deletes or seals under a worktree
// is resolved by an os.Root, which walks the path one component at a time
// with openat and refuses any symlink or ".." that leads out of the tree:
// such a path is ErrEscape and nothing is touched. A symlink that stays
// inside the tree is followed, as git itself would.
//
// Reads are bounded as well as confined: ReadFile and ReadRegular open the
// file without blocking (a FIFO cannot hang the console), refuse anything
// that is not a regular file (a device such as /dev/zero reports size 0 and
// never ends), and read at most the limit plus one byte.
package jail

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrEscape means a path under a worktree resolves outside it.
var ErrEscape = errors.New("resolves outside the worktree")

// ErrNotRegular means a file to be read is a directory, device, FIFO,
// socket or symlink rather than a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge means a file to be read is over its size limit.
var ErrTooLarge = errors.New("over the size limit")

// Dir is a directory tree whose paths never lead out of it.
type Dir struct {
	root *os.Root
	path string
}

// Open opens the tree at path. The path itself may be a symlink: it is the
// console's own choice; only what lies under it is confined.
func Open(path string) (*Dir, error) {
	r, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	return &Dir{root: r, path: path}, nil
}

// Path returns the tree's path as given to Open.
func (d *Dir) Path() string { return d.path }

// Close releases the tree's directory handle.
func (d *Dir) Close() error { return d.root.Close() }

// MkdirAll creates rel and its parents with perm.
func (d *Dir) MkdirAll(rel string, perm fs.FileMode) error {
	return d.wrap(rel, d.root.MkdirAll(clean(rel), perm))
}

// Remove removes the file or empty directory rel. A symlink is removed
// itself, never what it points at.
func (d *Dir) Remove(rel string) error {
	return d.wrap(rel, d.root.Remove(clean(rel)))
}

// Stat describes rel, following a final symlink only if it stays inside.
func (d *Dir) Stat(rel string) (fs.FileInfo, error) {
	fi, err := d.root.Stat(clean(rel))
	return fi, d.wrap(rel, err)
}

// Lstat describes rel itself, even when it is a symlink.
func (d *Dir) Lstat(rel string) (fs.FileInfo, error) {
	fi, err := d.root.Lstat(clean(rel))
	return fi, d.wrap(rel, err)
}

// WriteFile writes data to rel with perm, replacing what was there. A
// symlink at rel is not followed out of the tree.
func (d *Dir) WriteFile(rel string, data []byte, perm fs.FileMode) error {
	return d.wrap(rel, d.root.WriteFile(clean(rel), data, perm))
}

// ReadDir lists the directory rel.
func (d *Dir) ReadDir(rel string) ([]fs.DirEntry, error) {
	f, err := d.root.Open(clean(rel))
	if err != nil {
		return nil, d.wrap(rel, err)
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	return ents, d.wrap(rel, err)
}

// ReadFile reads the regular file rel, at most max bytes. A final symlink,
// a FIFO, a device or anything else that is not a regular file is
// ErrNotRegular; a file over max is ErrTooLarge.
func (d *Dir) ReadFile(rel string, max int64) ([]byte, error) {
	name := clean(rel)
	fi, err := d.root.Lstat(name)
	if err != nil {
		return nil, d.wrap(rel, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", rel, ErrNotRegular, kind(fi.Mode()))
	}
	f, err := d.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, d.wrap(rel, err)
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	// Swapped between the Lstat and the open: whatever it is now, it is not
	// the file that was checked.
	if !os.SameFile(fi, opened) || !opened.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (replaced while being read)", rel, ErrNotRegular)
	}
	return readLimited(rel, f, max)
}

// ReadRegular reads the regular file at path (anywhere: a handoff file, a
// task file, a config), at most max bytes. It follows symlinks, but refuses
// a FIFO, a device or a directory without blocking on it.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readLimited(path, f, max)
}

// OpenRegular opens the regular file at path for reading without blocking
// on a FIFO, and refuses anything that is not a regular file.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	return f, nil
}

// LimitReader reads r through a limit of max bytes and fails with
// ErrTooLarge, naming name, once there are more.
func LimitReader(name string, r io.Reader, max int64) io.Reader {
	return &limited{name: name, r: io.LimitReader(r, max+1), left: max, max: max}
}

type limited struct {
	name      string
	r         io.Reader
	left, max int64
}

func (l *limited) Read(p []byte) (int, error) {
	if l.left < 0 {
		return 0, fmt.Errorf("%s: %w of %d bytes", l.name, ErrTooLarge, l.max)
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		n, l.left = int(l.left), -1
		return n, fmt.Errorf("%s: %w of %d bytes", l.name, ErrTooLarge, l.max)
	}
	l.left -= int64(n)
	return n, err
}

func readLimited(name string, f io.Reader, max int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w of %d bytes", name, ErrTooLarge, max)
	}
	return data, nil
}

// IsEscape reports whether err means a path led outside its tree.
func IsEscape(err error) bool { return errors.Is(err, ErrEscape) }

// wrap turns os.Root's unexported "path escapes from parent" into
// ErrEscape, so callers can refuse it by name.
func (d *Dir) wrap(rel string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		return fmt.Errorf("%s: %w", rel, ErrEscape)
	}
	return err
}

func clean(rel string) string { return filepath.Clean(filepath.FromSlash(rel)) }

func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeDevice != 0 || m&fs.ModeCharDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

package engine

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Paths are where an engine keeps its files under the repository's state
// directory.
type Paths struct {
	Dir    string // private directory (0700) holding the socket
	Socket string // the unix socket (0600)
	Lock   string // the exclusive lock; holds the engine's pid
	Log    string // the background engine's stdout and stderr
}

// PathsFor returns the engine's paths for a repository root.
func PathsFor(root string) Paths {
	state := filepath.Join(root, task.StateDir)
	dir := filepath.Join(state, "engine")
	return Paths{
		Dir:    dir,
		Socket: filepath.Join(dir, "engine.sock"),
		Lock:   filepath.Join(state, "engine.lock"),
		Log:    filepath.Join(state, "engine.log"),
	}
}

// Listen creates the socket in a directory only this user may enter, and
// makes the socket itself private too. A socket file left by an engine
// that died is removed; the lock, not the socket, says whether an engine
// runs, so call Listen only while holding it.
func Listen(p Paths) (net.Listener, error) {
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("engine socket directory: %w", err)
	}
	// MkdirAll keeps an existing directory's mode.
	if err := os.Chmod(p.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("engine socket directory: %w", err)
	}
	if err := os.Remove(p.Socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale engine socket: %w", err)
	}
	ln, err := net.Listen("unix", p.Socket)
	if err != nil {
		return nil, fmt.Errorf("engine socket %s: %w", p.Socket, err)
	}
	if err := os.Chmod(p.Socket, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("engine socket %s: %w", p.Socket, err)
	}
	return ln, nil
}

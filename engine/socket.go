package engine

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/wire"
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

// Listen serves the engine's socket (p.Socket, in p.Dir): wire.Listen's
// private directory and socket. A socket file left by an engine that died
// is replaced; the lock, not the socket, says whether an engine runs, so
// call Listen only while holding it.
func Listen(p Paths) (net.Listener, error) {
	ln, err := wire.Listen(p.Socket)
	if err != nil {
		return nil, fmt.Errorf("engine %w", err)
	}
	return ln, nil
}

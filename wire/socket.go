package wire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
)

// Listen serves a unix socket at path in a directory only this user may
// enter (created or narrowed to 0700), the socket itself 0600. A socket
// file left by a process that died is replaced: call Listen only when
// whatever owns path (a lock, a session id) says nobody else serves it.
func Listen(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("socket directory: %w", err)
	}
	// MkdirAll keeps an existing directory's mode.
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("socket directory: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("remove stale socket: %w", err)
	}
	ln, err := listenUnix(path)
	if err != nil {
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("socket %s: %w", path, err)
	}
	return ln, nil
}

// maxSocketPath is the longest path a unix socket address holds (108
// bytes with its terminating NUL on Linux).
const maxSocketPath = 107

// listenUnix binds path; a path too long for a socket address is reached
// through its directory's descriptor (/proc/self/fd/N/name).
func listenUnix(path string) (net.Listener, error) {
	if len(path) <= maxSocketPath {
		return net.Listen("unix", path)
	}
	var ln net.Listener
	err := viaDir(path, func(short string) (err error) {
		ln, err = net.Listen("unix", short)
		return err
	})
	if ul, ok := ln.(*net.UnixListener); ok {
		// The short name means nothing once the descriptor is closed:
		// Close must not try to unlink it; the owner removes path.
		ul.SetUnlinkOnClose(false)
	}
	return ln, err
}

// Dial connects to the unix socket at path, however long the path.
func Dial(ctx context.Context, path string) (net.Conn, error) {
	var d net.Dialer
	if len(path) <= maxSocketPath {
		return d.DialContext(ctx, "unix", path)
	}
	var c net.Conn
	err := viaDir(path, func(short string) (err error) {
		c, err = d.DialContext(ctx, "unix", short)
		return err
	})
	return c, err
}

// viaDir calls f with a short name for path: its directory's descriptor
// under /proc/self/fd, then its base name.
func viaDir(path string, f func(short string) error) error {
	dir, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer dir.Close()
	short := fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), filepath.Base(path))
	if len(short) > maxSocketPath {
		return fmt.Errorf("socket name %q is too long", filepath.Base(path))
	}
	return f(short)
}

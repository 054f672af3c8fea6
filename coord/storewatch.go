package coord

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// The store is watched. A store file deleted while the engine runs keeps
// accepting writes (SQLite writes to the unlinked inode), so every task the
// run records is lost without an error; a read-only store fails every
// write. Either way the engine must stop placing work at once, say so once,
// plainly, and keep the live sessions running (their work is in their
// worktrees), and a headless run must exit non-zero: nothing recorded after
// the failure can be trusted, so nothing is reported green.

// storeWatch is what the watcher knows of the store's file; it lives on the
// coordinator's loop.
type storeWatch struct {
	path  string // "" when the store has no file (PostgreSQL)
	ino   uint64
	dev   uint64
	fault string // set once: the operator's message
}

// pathed is a store that lives in a file.
type pathed interface{ Path() string }

// initStoreWatch records the store file's identity.
func (c *Coordinator) initStoreWatch() {
	p, ok := c.st.(pathed)
	if !ok {
		return
	}
	c.sw.path = p.Path()
	var st syscall.Stat_t
	if err := syscall.Stat(c.sw.path, &st); err == nil {
		c.sw.ino, c.sw.dev = st.Ino, uint64(st.Dev)
	}
}

// watchStore checks the store file is still the one opened and writable.
// It runs on every lease tick: a stat and two access calls.
func (c *Coordinator) watchStore() {
	if c.sw.fault != "" || c.sw.path == "" {
		return
	}
	path := c.sw.path
	var st syscall.Stat_t
	err := syscall.Stat(path, &st)
	switch {
	case errors.Is(err, syscall.ENOENT):
		c.storeFailed(fmt.Sprintf("The store %s was deleted while the engine ran: nothing recorded from now on would survive.", path),
			"Stop the engine (orchestra-tui stop) and start it again: a new store is created; add the tasks again or resume them from a handoff.")
		return
	case err != nil:
		c.storeFailed(fmt.Sprintf("The store %s cannot be read: %v.", path, err),
			"Check the file and its directory, then restart the engine.")
		return
	case c.sw.ino != 0 && (st.Ino != c.sw.ino || uint64(st.Dev) != c.sw.dev):
		c.storeFailed(fmt.Sprintf("The store %s was replaced by another file while the engine ran.", path),
			"Stop the engine (orchestra-tui stop) and start it again on the store you mean to use.")
		return
	}
	for _, p := range []string{path, filepath.Dir(path)} {
		if err := unix.Access(p, unix.W_OK); err != nil {
			c.storeFailed(fmt.Sprintf("The store %s cannot be written: %s is not writable (%v).", path, p, err),
				fmt.Sprintf("Make it writable by user %d again (chmod u+w, or remount the file system read-write), then restart the engine.", os.Getuid()))
			return
		}
	}
}

// storeFailed stops placement and publishes the failure, once: what
// happened, where, that live sessions keep running, and what to do.
func (c *Coordinator) storeFailed(what, todo string) {
	if c.sw.fault != "" {
		return
	}
	c.sw.fault = what + " Placement has stopped; live sessions keep running. " + todo
	ev := c.refusalEvent("", "", task.ReasonStoreFailed, c.sw.fault)
	c.hub.event(ev)
}

// writeFailed is storeFailed for a write that returned err.
func (c *Coordinator) writeFailed(err error) {
	where := "the store"
	if c.sw.path != "" {
		where = "the store " + c.sw.path
	}
	c.storeFailed(fmt.Sprintf("A write to %s failed: %v.", where, err),
		"Check the disk (df -h) and the file's permissions, then restart the engine.")
}

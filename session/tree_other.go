//go:build !linux

package session

import (
	"syscall"
	"time"
)

// Marked finds nothing where /proc and pidfds are missing: only the
// program's process group is stopped there.
func Marked(owner, task string) []Proc { return nil }

// StopMarked does nothing where marked processes cannot be found.
func StopMarked(owner, task, keep string, grace time.Duration) error { return nil }

func stopSession(owner, task, session string, skip int, grace time.Duration) error { return nil }

func signalSession(owner, task, session string, skip int, sig syscall.Signal) {}

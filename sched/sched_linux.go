package sched

import (
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// ShortSlice asks for Slice on every thread of the process. Threads the Go
// runtime starts later, and processes started from any thread afterwards,
// inherit it (it is kept across exec): call it after starting children
// that should keep the default, such as a session's agent. A kernel that
// knows no slice for ordinary tasks ignores the request; one that refuses
// it yields an error, which costs nothing but the latency.
func ShortSlice() error { return setAll(Slice) }

// DefaultSlice gives every thread of the process the kernel's own slice
// again, so that a child started next does not inherit ShortSlice's.
func DefaultSlice() error { return setAll(0) }

// setAll gives every thread the slice ns. A thread cloned while it runs
// inherits its parent's slice, which may not have been set yet, and is not
// in the list already read: so the list is read again until it shows no
// thread not set yet. Past that, every thread has ns, and so does any
// thread they clone (a CI run saw one thread keep the short slice after
// DefaultSlice).
func setAll(ns uint64) error {
	set := map[int]bool{}
	var errs []error
	for {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return fmt.Errorf("list this process's threads: %w", err)
		}
		fresh := false
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || set[tid] {
				continue
			}
			set[tid], fresh = true, true
			if err := setSlice(tid, ns); err != nil && !errors.Is(err, unix.ESRCH) {
				errs = append(errs, fmt.Errorf("thread %d: %w", tid, err))
			}
		}
		if !fresh {
			return errors.Join(errs...)
		}
	}
}

func setSlice(tid int, ns uint64) error {
	a, err := unix.SchedGetAttr(tid, 0)
	if err != nil {
		return err
	}
	if a.Policy != unix.SCHED_NORMAL && a.Policy != unix.SCHED_BATCH {
		// A real-time or idle policy was chosen on purpose: leave it.
		return nil
	}
	a.Runtime = ns
	a.Flags &= unix.SCHED_FLAG_RESET_ON_FORK
	return unix.SchedSetAttr(tid, a, 0)
}

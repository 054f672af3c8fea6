package engine

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Lock is the exclusive lock one engine per repository holds for its whole
// life. The kernel releases it when the process dies however it dies, so a
// killed engine never blocks the next one.
type Lock struct{ f *os.File }

// LockedError says another engine holds the lock.
type LockedError struct{ Pid int }

func (e *LockedError) Error() string {
	if e.Pid > 0 {
		return fmt.Sprintf("an engine already runs on this repository (pid %d); attach with `orchestra-tui`, or stop it with `orchestra-tui stop`", e.Pid)
	}
	return "an engine already runs on this repository; attach with `orchestra-tui`, or stop it with `orchestra-tui stop`"
}

// Acquire takes the lock at path without waiting and writes this process's
// pid into it.
func Acquire(path string) (*Lock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("engine lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &LockedError{Pid: LockHolder(path)}
		}
		return nil, fmt.Errorf("engine lock: %w", err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Release gives the lock up.
func (l *Lock) Release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// LockHolder returns the pid written in the lock file, 0 when unknown.
func LockHolder(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

// Held reports whether some process holds the lock at path.
func Held(path string) bool {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		return errors.Is(err, syscall.EWOULDBLOCK)
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// lockPatience is how long a starting engine waits for the lock while no
// engine answers on the socket.
const lockPatience = 10 * time.Second

// acquireForEngine takes the lock for an engine. A CLI command that applies
// a change while no engine runs holds the lock for a moment (cmd's
// applyOffline); an engine starting just then waits for it, bounded,
// instead of failing with "an engine already runs". A lock whose holder
// answers on the engine socket is an engine: refused at once.
func acquireForEngine(p Paths) (*Lock, error) {
	deadline := time.Now().Add(lockPatience)
	for {
		lock, err := Acquire(p.Lock)
		var le *LockedError
		if err == nil || !errors.As(err, &le) || time.Now().After(deadline) || answers(p.Socket) {
			return lock, err
		}
		// flock has no timeout; a short poll stands in for one.
		time.Sleep(50 * time.Millisecond)
	}
}

// answers reports whether something accepts connections on the socket.
func answers(socket string) bool {
	c, err := net.DialTimeout("unix", socket, time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

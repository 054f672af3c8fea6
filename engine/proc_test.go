package engine

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
)

// processAlive returns nil when pid is a live process (a zombie counts as
// gone).
func processAlive(pid int) error {
	if err := syscall.Kill(pid, 0); err != nil {
		return err
	}
	var ws syscall.WaitStatus
	if p, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); p == pid {
		return errors.New("exited")
	}
	// A zombie whose parent has not collected it yet (a session host's
	// launcher reaps it on a goroutine of its own) has exited too.
	if st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err != nil {
		return err
	} else if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
		return errors.New("exited (a zombie)")
	}
	return nil
}

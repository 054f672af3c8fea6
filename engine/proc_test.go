package engine

import (
	"errors"
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
	return nil
}

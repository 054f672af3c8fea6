//go:build !linux

package session

// becomeSubreaper is a no-op where the kernel has no child subreapers; the
// program's orphans are then reaped by init.
func becomeSubreaper() {}

//go:build !linux

package session

import "time"

func cgroupCPU(dir string) (time.Duration, bool) { return 0, false }

// treeCPU is unknown where there is no /proc.
func treeCPU(leader int) (time.Duration, bool) { return 0, false }

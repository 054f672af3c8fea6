//go:build !linux

package session

import "time"

func cgroupCPU(dir string) (time.Duration, bool) { return 0, false }

// treeCPU is unknown where there is no /proc.
func treeCPU(leader int) (time.Duration, bool) { return 0, false }

// procStat is a process's times, where /proc gives them.
type procStat struct {
	pid         int
	self, start int64
}

func treeStats(leader int) ([]procStat, bool) { return nil, false }

func readStat(pid int) (procStat, bool) { return procStat{}, false }

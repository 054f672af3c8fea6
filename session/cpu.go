package session

import "time"

// CPU returns the CPU time (user and system) the session's process tree
// has used so far, and whether it could be measured. Where the session
// runs in a cgroup of its own it is the cgroup's cpu.stat usage_usec,
// which counts every process that ever ran in it; elsewhere it is the sum
// of the times /proc gives the live processes of the tree (the program's
// session and every descendant, with the times of the children they have
// reaped), so a process that exits unreaped takes its time with it and
// the figure can fall: readers compare it as a meter that only counts
// rises (worker's CPU meter). It reads the kernel's counters each call.
func (s *Session) CPU() (time.Duration, bool) {
	select {
	case <-s.done:
		return 0, false
	default:
	}
	if s.cg != nil {
		if d, ok := cgroupCPU(s.cg.dir); ok {
			return d, true
		}
	}
	return treeCPU(s.cmd.Process.Pid)
}

package session

import "time"

// CPU returns the CPU time (user and system) the work the session's agent
// started has used so far, and whether it could be measured: its process
// tree's, less what the agent CLI's own processes spent on themselves
// while it idled (see ownProcs: the program, and its tree when its launch
// was confirmed; their time counts only within OwnGrace of an input or a
// change of screen). Where the session
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
	d, ok := time.Duration(0), false
	if s.cg != nil {
		d, ok = cgroupCPU(s.cg.dir)
	}
	if !ok {
		d, ok = treeCPU(s.cmd.Process.Pid)
	}
	if !ok {
		return 0, false
	}
	return max(d-s.own.uncounted(s.own.spent(readStat), s.Fingerprint(), s.now()), 0), true
}

package session

import (
	"sync"
	"time"
)

// The CPU time a session reports is the work its agent started, not the
// agent CLI's own. A CLI at its prompt, or waiting on its model behind a
// spinner, keeps its own process busy: opencode 1.18.33 used 25 to 50 % of
// one core, all the time, on a loaded 2-core machine, at its idle prompt
// and while its request was held, which is above lease.WorkShare, so its
// stalls renewed their leases to the cap and were never flagged stuck.
// What a silent agent works on is what it runs: a build, a test run, a
// tool, each a process it starts. So the processes of the CLI itself are
// left out of the figure: the program the harness starts, and every
// process of its tree when its launch was confirmed (WaitReady: its ready
// prompt, then a quiet period), before any brief could ask it for work;
// what they spend on themselves (utime and stime) is not counted, what
// the children they reaped spent (cutime and cstime) is.

// clockTicks is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const clockTicks = 100

// ownProcs are the CLI's own processes and the time they spent on
// themselves at their last reading. Safe for concurrent use.
type ownProcs struct {
	mu    sync.Mutex
	procs map[int]ownProc // by pid
}

// ownProc is one of the CLI's processes: its start (a pid the kernel gave
// to another process since has another) and its own ticks last read.
type ownProc struct {
	start int64
	self  int64
}

// add records the processes of stats as the CLI's own.
func (o *ownProcs) add(stats []procStat) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.procs == nil {
		o.procs = map[int]ownProc{}
	}
	for _, st := range stats {
		if p, ok := o.procs[st.pid]; ok && p.start == st.start {
			continue
		}
		o.procs[st.pid] = ownProc{start: st.start, self: st.self}
	}
}

// spent reads the CLI's processes again and returns the time they spent
// on themselves: a process that is gone keeps what it was last read at,
// so its exit takes nothing out of the sum (a cgroup keeps the time of
// its exited processes too). read returns a process's stat, false once
// it is gone.
func (o *ownProcs) spent(read func(pid int) (procStat, bool)) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	var ticks int64
	for pid, p := range o.procs {
		if st, ok := read(pid); ok && st.start == p.start && st.self > p.self {
			p.self = st.self
			o.procs[pid] = p
		}
		ticks += p.self
	}
	return time.Duration(ticks) * (time.Second / clockTicks)
}

// markProgram records the program the harness started as the CLI's own;
// only it: a process it forks at once may already be work (a harness
// whose program is a shell that starts one).
func (s *Session) markProgram() {
	if st, ok := readStat(s.cmd.Process.Pid); ok {
		s.own.add([]procStat{st})
	}
}

// markOwn records the session's tree as it is now as the CLI's own.
func (s *Session) markOwn() {
	if stats, ok := treeStats(s.cmd.Process.Pid); ok {
		s.own.add(stats)
	}
}

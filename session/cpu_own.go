package session

import (
	"sync"
	"time"
)

// The CPU time a session reports is the work its agent did, and an agent
// CLI's own process is sometimes working and sometimes only idling. At
// its idle prompt and behind its spinner while its model request is held,
// opencode 1.18.33 keeps its own process busy (8 to 17 % of one core on a
// 2-core machine at load 23; with eight busy loops added, 1 to 3 % at
// its settled prompt and 18 to 20 % behind a held request; 20 to 50 %
// measured at other loads), above
// lease.WorkShare, so a stall renewed its lease to the cap and was never
// flagged stuck. But building a request is the same process's work, at the
// same rate: the same machine took 34 s from the brief to the first request
// at 16 % of a core, and a lease shorter than that expired when that time
// was left out. The rate cannot tell the two apart; their length can:
// building follows something that gave the CLI work (the brief, a
// correction, a tool's result shown on the screen) and ends with a reply
// that changes the screen, while a stall goes on. So the CLI's own time
// counts as work only within OwnGrace of the last input sent to the
// session or the last change of its screen (less its volatile regions, as
// the harness says: a spinner is not a change), and what a process the CLI
// starts after its launch was confirmed (a build, a test run, a tool)
// spends always counts.
//
// The CLI's own processes are the program the harness starts and every
// process of its tree when its launch was confirmed (WaitReady: its ready
// prompt, then a quiet period), before any brief could ask it for work;
// what they spend on themselves is utime and stime, what the children
// they reaped spent (cutime and cstime) is the children's.

// OwnGrace is how long after the last input or change of screen the agent
// CLI's own CPU time counts as work, unless its harness sets own_grace:
// longer than opencode took to build a request on a loaded machine (34 s),
// and a minute (lease.CPUWindow) at most of a stall hidden behind a
// spinner.
const OwnGrace = time.Minute

// clockTicks is the unit of the times in /proc/PID/stat (USER_HZ, 100 on
// every Linux architecture Go supports).
const clockTicks = 100

// ownProcs are the CLI's own processes and the time they spent on
// themselves at their last reading. Safe for concurrent use.
type ownProcs struct {
	mu    sync.Mutex
	procs map[int]ownProc // by pid
	// seen is the time spent when counted was last brought up to date;
	// counted is what of the time spent counted as work (OwnGrace).
	seen, counted time.Duration
	// screen is the session's screen (less its volatile regions) at the
	// last reading, and activeAt when it last changed or input was sent.
	screen   string
	activeAt time.Time
	// grace is the harness's own_grace; 0 means OwnGrace.
	grace time.Duration
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

// active records an input sent to the session, or its confirmation, at at.
func (o *ownProcs) active(at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if at.After(o.activeAt) {
		o.activeAt = at
	}
}

// uncounted returns the time the CLI's processes spent on themselves that
// does not count as work, given spent (what they spent so far), the
// session's screen (less its volatile regions) and the time now: what they
// spent since the last call counts when the screen changed since, or when
// the last input or change of screen is at most the grace (OwnGrace
// unless the harness sets own_grace) before now.
func (o *ownProcs) uncounted(spent time.Duration, screen string, now time.Time) time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if screen != o.screen {
		o.screen = screen
		if now.After(o.activeAt) {
			o.activeAt = now
		}
	}
	grace := o.grace
	if grace <= 0 {
		grace = OwnGrace
	}
	if spent > o.seen {
		if !o.activeAt.IsZero() && now.Sub(o.activeAt) <= grace {
			o.counted += spent - o.seen
		}
		o.seen = spent
	}
	return spent - o.counted
}

// markProgram records the program the harness started as the CLI's own;
// only it: a process it forks at once may already be work (a harness
// whose program is a shell that starts one).
func (s *Session) markProgram() {
	if st, ok := readStat(s.cmd.Process.Pid); ok {
		s.own.add([]procStat{st})
	}
	s.own.active(s.now())
}

// markOwn records the session's tree as it is now as the CLI's own.
func (s *Session) markOwn() {
	if stats, ok := treeStats(s.cmd.Process.Pid); ok {
		s.own.add(stats)
	}
	s.own.active(s.now())
}

package worker

import (
	"time"

	"github.com/orchestra-tui/orchestra-tui/lease"
)

// cpuReader is a session that can say how much CPU time its process tree
// has used (session.Session from the kernel's counters, a session host's
// client by asking its host).
type cpuReader interface {
	CPU() (time.Duration, bool)
}

// cpuEvery bounds how often a run reads its tree's CPU time: without a
// cgroup a reading walks /proc, and the stuck window is a minute long.
const cpuEvery = time.Second

// CPUMeter turns readings of a session tree's CPU time into a sample's
// figures: a total that only rises (a tree measured from /proc loses the
// time of a process that exits unreaped, so a reading may fall; only
// rises are counted) and what of it was used in the last lease.CPUWindow.
// The worker's sampler feeds it from the session; workertest's Fake from
// the test. Not safe for concurrent use.
type CPUMeter struct {
	known  bool
	last   time.Duration // the last reading
	total  time.Duration
	points []cpuPoint // the totals of the window, oldest first
}

type cpuPoint struct {
	at    time.Time
	total time.Duration
}

// Add records a reading of the tree's CPU time taken at at.
func (m *CPUMeter) Add(at time.Time, reading time.Duration) {
	switch {
	case !m.known:
		m.known, m.total = true, reading
	case reading > m.last:
		m.total += reading - m.last
	}
	m.last = reading
	m.points = append(m.points, cpuPoint{at: at, total: m.total})
	// Keep one point at or before the window's start, so the window is
	// covered whole once the meter has run that long.
	from := at.Add(-lease.CPUWindow)
	for len(m.points) > 1 && !m.points[1].at.After(from) {
		m.points = m.points[1:]
	}
}

// Total is the CPU time counted since the first reading, that reading
// included; zero before any.
func (m *CPUMeter) Total() time.Duration { return m.total }

// Recent returns the CPU time used since from, looking back no further
// than the meter's window (lease.CPUWindow; less while it has run for
// less), and the span of wall time it was used in: from the oldest
// reading at or after from to the newest.
func (m *CPUMeter) Recent(from time.Time) (used, span time.Duration) {
	if len(m.points) < 2 {
		return 0, 0
	}
	last := m.points[len(m.points)-1]
	first := m.points[0]
	for _, p := range m.points {
		if !p.at.Before(from) {
			first = p
			break
		}
		first = last
	}
	return last.total - first.total, last.at.Sub(first.at)
}

// StuckWindow is how far back a still screen's CPU time is looked at for
// the stuck flag: lease.CPUWindow, or stuck.after when that is shorter, so
// the tree counts as working only if it worked in the time the flag waits
// out, and a burst of work long past holds no flag off for long.
func StuckWindow(stuckAfter time.Duration) time.Duration {
	if stuckAfter > 0 && stuckAfter < lease.CPUWindow {
		return stuckAfter
	}
	return lease.CPUWindow
}

// later returns the later of two instants.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// Working returns the CPU time used since from (as Recent) when it is work
// (lease.CPUWorks), zero otherwise. The caller gives when the screen went
// still (or the brief was delivered, if later): the start-up of an agent's
// CLI, which keeps a core busy for seconds before its prompt shows, is not
// work on a still screen that came after it.
func (m *CPUMeter) Working(from time.Time) time.Duration {
	used, span := m.Recent(from)
	if lease.CPUWorks(used, span) {
		return used
	}
	return 0
}

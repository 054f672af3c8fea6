package session

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// cgroupCPU reads usage_usec from the cgroup dir's cpu.stat (present in
// every cgroup v2, whether or not the cpu controller is enabled).
func cgroupCPU(dir string) (time.Duration, bool) {
	data, err := os.ReadFile(filepath.Join(dir, "cpu.stat"))
	if err != nil {
		return 0, false
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("usage_usec ")); ok {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			if err != nil {
				return 0, false
			}
			return time.Duration(n) * time.Microsecond, true
		}
	}
	return 0, false
}

// procStat is what treeCPU needs of one /proc/PID/stat.
type procStat struct {
	pid, ppid, sid int
	ticks          int64 // utime+stime+cutime+cstime
	self           int64 // utime+stime: the process's own, its threads'
	start          int64 // starttime, in ticks since boot
}

// parseStat reads a /proc/PID/stat line. The command name (field 2) is in
// parentheses and may hold spaces and parentheses: the fields after it
// start after its last ')'.
func parseStat(data []byte) (procStat, bool) {
	open := bytes.IndexByte(data, '(')
	end := bytes.LastIndexByte(data, ')')
	if open < 0 || end < open {
		return procStat{}, false
	}
	pid, err := strconv.Atoi(string(bytes.TrimSpace(data[:open])))
	if err != nil {
		return procStat{}, false
	}
	// After the name: state(3) ppid(4) pgrp(5) session(6) ... utime(14)
	// stime(15) cutime(16) cstime(17) ... starttime(22).
	f := bytes.Fields(data[end+1:])
	if len(f) < 20 {
		return procStat{}, false
	}
	num := func(i int) int64 {
		n, _ := strconv.ParseInt(string(f[i]), 10, 64)
		return n
	}
	return procStat{pid: pid, ppid: int(num(1)), sid: int(num(3)),
		ticks: num(11) + num(12) + num(13) + num(14), self: num(11) + num(12), start: num(19)}, true
}

// readStat reads the stat of one process; false once it is gone.
func readStat(pid int) (procStat, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	return parseStat(data)
}

// treeCPU sums the times of leader's tree (treeStats).
func treeCPU(leader int) (time.Duration, bool) {
	stats, ok := treeStats(leader)
	if !ok {
		return 0, false
	}
	var ticks int64
	for _, st := range stats {
		ticks += st.ticks
	}
	return time.Duration(ticks) * (time.Second / clockTicks), true
}

// treeStats returns the stats of leader's tree: the processes of its
// session (the program starts in a session of its own, so its sid is its
// pid) and every descendant of those, which a setsid cannot hide from the
// parent links. One pass over /proc; false when leader is gone.
func treeStats(leader int) ([]procStat, bool) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, false
	}
	stats := make([]procStat, 0, len(ents))
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone meanwhile
		}
		if st, ok := parseStat(data); ok {
			stats = append(stats, st)
		}
	}
	in := map[int]bool{}
	found := false
	for _, st := range stats {
		if st.pid == leader || st.sid == leader {
			in[st.pid] = true
			found = found || st.pid == leader
		}
	}
	if !found {
		return nil, false
	}
	// Descendants that left the session: follow parent links until no
	// process is added (a tree is a few levels deep).
	for grew := true; grew; {
		grew = false
		for _, st := range stats {
			if !in[st.pid] && in[st.ppid] {
				in[st.pid] = true
				grew = true
			}
		}
	}
	tree := stats[:0]
	for _, st := range stats {
		if in[st.pid] {
			tree = append(tree, st)
		}
	}
	return tree, true
}

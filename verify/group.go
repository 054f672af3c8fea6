package verify

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"
)

// reapWait bounds how long Run waits for a killed group's members to die.
const reapWait = 2 * time.Second

// killGroup sends SIGKILL to every process in the group and waits, bounded,
// until none of them is still running, so that when Run returns nothing it
// started can still touch the worktree.
//
// Killed grandchildren are reparented to init and stay zombies until init
// reaps them; some container inits never do. A zombie runs nothing, so the
// wait counts only members that are not zombies (Linux /proc tells them
// apart; elsewhere the wait ends as soon as kill reports the group empty).
func killGroup(pgid int) {
	if err := syscall.Kill(-pgid, syscall.SIGKILL); errors.Is(err, syscall.ESRCH) {
		return // the common case: the group was already empty
	}
	deadline := time.NewTimer(reapWait)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for running(pgid) > 0 {
		select {
		case <-deadline.C:
			return
		case <-tick.C:
		}
	}
}

// running counts the members of process group pgid that are not zombies.
// Without /proc it falls back to kill's view: 1 while the group exists.
func running(pgid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
			return 0
		}
		return 1
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		state, group, ok := procStat("/proc/" + e.Name() + "/stat")
		if ok && group == pgid && state != 'Z' && state != 'X' {
			n++
		}
	}
	return n
}

// procStat reads the state and process group from a /proc/<pid>/stat file:
// "pid (comm) S ppid pgrp …", where comm may itself hold spaces and parens.
func procStat(path string) (state byte, pgrp int, ok bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], g, true
}

package coord

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
)

// A lease holder names the engine instance that holds it:
//
//	engine:<pid>:<start>:<instance>
//
// pid alone cannot tell a live holder from a dead one whose pid the kernel
// has since given to another process: a task would then stay running for
// ever. <start> is the process's start time (clock ticks after boot, from
// /proc/<pid>/stat), which a reused pid does not share; <instance> tells
// two coordinators in one process apart. Holders written before the start
// time was recorded ("console:<pid>:<instance>") are judged by pid alone;
// "console:" is what holders were called before the engine ran on its own,
// and is read as "engine:".

// Engines on other machines share a PostgreSQL store: their pids mean
// nothing here. Each engine records a heartbeat under its holder name with
// its host (store.EngineHeartbeat); a holder whose engine runs on another
// host is alive while that heartbeat is younger than EngineTTL and the
// engine has not recorded a clean stop. A holder on this host, or one no
// engine recorded (a coordinator run without the engine package), is judged
// by its pid and start time.

// HeartbeatEvery is how often an engine records its heartbeat by default
// ([fleet] heartbeat).
const HeartbeatEvery = 10 * time.Second

// EngineTTL is how old the heartbeat of another machine's engine may be
// before its leases are taken as orphaned, by default ([fleet] ttl): three
// missed beats.
const EngineTTL = 3 * HeartbeatEvery

// holderLive reports whether holder may still run its session, judging
// another host's engine by its heartbeat (younger than ttl, no clean stop)
// and this host's by its process. An engine that stopped keeping its
// agents for its clone's next engine (`stop --keep-agents`) holds its
// leases until its stop is older than ttl, for every engine but that next
// one (on host, serving root), which takes them up.
func holderLive(holder string, engines map[string]store.Engine, host, root string, now time.Time, ttl time.Duration) bool {
	e, ok := engines[holder]
	if ok && keptFor(e, host, root) {
		return e.HeartbeatAge(now) <= ttl
	}
	if ok && e.Host != host {
		return e.StoppedAt.IsZero() && e.HeartbeatAge(now) <= ttl
	}
	return holderAlive(holder)
}

// keptFor reports whether e stopped keeping its agents for a next engine
// other than the one on host serving root.
func keptFor(e store.Engine, host, root string) bool {
	return e.Kept && !e.StoppedAt.IsZero() && (e.Host != host || e.Repo != root)
}

// EngineLive reports whether the engine e recorded may still run, as the
// coordinator judges it: on this host (named host) by its process, on
// another by a heartbeat younger than ttl.
func EngineLive(e store.Engine, host string, now time.Time, ttl time.Duration) bool {
	if e.Host == host {
		return holderProcessAlive(e.ID)
	}
	return e.HeartbeatAge(now) <= ttl
}

// holderGone says, for an orphan's event, why holder is taken as gone.
func holderGone(holder string, engines map[string]store.Engine, host, root string, now time.Time, ttl time.Duration) string {
	e, ok := engines[holder]
	switch {
	case ok && keptFor(e, host, root):
		return fmt.Sprintf("Engine %s on %s stopped at %s keeping its agents for its next engine, which did not take them up within the TTL (%s).",
			holder, e.Host, e.StoppedAt.Format(time.TimeOnly), ttl)
	case !ok || e.Host == host:
		return fmt.Sprintf("The %s is gone.", holderText(holder))
	case !e.StoppedAt.IsZero():
		return fmt.Sprintf("Engine %s on %s stopped at %s.", holder, e.Host, e.StoppedAt.Format(time.TimeOnly))
	default:
		return fmt.Sprintf("Engine %s on %s last beat %s ago (its TTL is %s): the machine is taken as lost.",
			holder, e.Host, e.HeartbeatAge(now).Round(time.Millisecond), ttl)
	}
}

// holderText names a holder for the operator: "engine pid 8888" for one
// of this host's engines, the raw name for anything else.
func holderText(holder string) string {
	parts := strings.Split(holder, ":")
	if len(parts) >= 3 && (parts[0] == "engine" || parts[0] == "console") {
		if _, err := strconv.Atoi(parts[1]); err == nil {
			return "engine pid " + parts[1]
		}
	}
	return "holder " + holder
}

// engineIndex maps holder names to the engines the store recorded.
func engineIndex(es []store.Engine) map[string]store.Engine {
	m := make(map[string]store.Engine, len(es))
	for _, e := range es {
		m[e.ID] = e
	}
	return m
}

// newHolder returns this process's holder name for instance.
func newHolder(instance string) string {
	start, err := procStart(os.Getpid())
	if err != nil {
		return fmt.Sprintf("engine:%d:%s", os.Getpid(), instance)
	}
	return fmt.Sprintf("engine:%d:%d:%s", os.Getpid(), start, instance)
}

// holderAlive reports whether a lease holder may still be running. A
// holder in this very process that is not this coordinator is an earlier
// instance, so it is gone.
func holderAlive(holder string) bool {
	parts := strings.Split(holder, ":")
	if len(parts) >= 3 && parts[1] == strconv.Itoa(os.Getpid()) {
		return false
	}
	return holderProcessAlive(holder)
}

// holderProcessAlive reports whether the process holder names runs: its
// pid is live, not a zombie, and started when the name says.
func holderProcessAlive(holder string) bool {
	parts := strings.Split(holder, ":")
	if len(parts) < 3 || (parts[0] != "engine" && parts[0] != "console") {
		return false
	}
	pid, err := strconv.Atoi(parts[1])
	if err != nil || pid <= 0 {
		return false
	}
	err = syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	if zombie(pid) {
		// Killed, and not collected yet: where init is slow to reap (a
		// container's), a dead engine stays a zombie for seconds, and its
		// sessions must not wait for that.
		return false
	}
	if len(parts) < 4 {
		return true // an old holder name: the pid is all there is
	}
	want, err := strconv.ParseUint(parts[2], 10, 64)
	if err != nil {
		return false
	}
	got, err := procStart(pid)
	if err != nil {
		return true // cannot tell: never take a live holder's task
	}
	return got == want
}

// zombie reports whether pid has exited and waits for its parent to
// collect it (state Z in /proc/<pid>/stat).
func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i > 0 && i+2 < len(b) && b[i+2] == 'Z'
}

// procStart returns the start time of process pid in clock ticks after
// boot (field 22 of /proc/<pid>/stat).
func procStart(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) is in parentheses and may hold spaces and
	// parentheses itself: count fields after the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := strings.Fields(s[i+1:])
	// fields[0] is field 3 (state); field 22 is fields[19].
	if len(fields) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	return strconv.ParseUint(fields[19], 10, 64)
}

// hostname names this machine as engines record it: [fleet] host, or the
// machine's hostname.
func hostname(configured string) string {
	if configured != "" {
		return configured
	}
	h, _ := os.Hostname()
	return h
}

// HostName is the name the engine records for this machine under cfg's
// [fleet] host.
func HostName(configured string) string { return hostname(configured) }

// repoOwner is the owner mark of the engines serving r's clone
// (session.OwnerMark), "" without a repository.
func repoOwner(r *repo.Repo) string {
	if r == nil {
		return ""
	}
	return session.OwnerMark(r.Root)
}

package coord

import (
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// slot is one of the engine's slots ([[slot]]) and how many of its
// sessions run.
type slot struct {
	config.Slot
	busy int
}

// run is one live session of a task, as the loop tracks it.
type run struct {
	taskID    task.ID
	sessionID string
	token     int64
	phase     task.Phase
	attempt   int
	slot      *slot
	spec      session.Spec
	dir       string // worktree
	base      string
	w         worker.Handle
	lease     lease.Lease
	started   time.Time
	launched  time.Time // when the session was launched
	confirmed bool
	briefed   bool
	brief     string
	finishing bool // the phase finished; verify or advance in progress
	stopping  bool // the coordinator is stopping it; its exit is expected
	// signalled: the engine sent the session its stop (SIGHUP, then
	// SIGTERM and SIGKILL past the grace), so the signal in its exit
	// status is the engine's, not the agent's doing (endRunWith).
	signalled bool
	stuck     bool
	// needsYou is the dialog the session waits at for the operator, ""
	// for none (needsyou.go).
	needsYou string
	// limit is the provider's limit the session waits for, nil for none
	// (limitwait.go).
	limit     *limitHold
	resubmits int
	errors    []string // refusal and error sentences of this attempt, newest kept (addError)
	dropped   int      // errors of this attempt dropped from errors
	// held are corrections recorded while this session's brief was being
	// rendered: typed after the brief unless the brief already has them.
	held  []worker.Input
	unsub func()
	meter *meter // counts the usage the agent reports; nil when it reports none
	// inBrief are the ids of the decisions the session's brief carried.
	inBrief map[string]bool
	// fetchNote says why the task's branch could not be fetched before
	// the launch ([fleet] remote), for a refusal once it is live.
	fetchNote string
	// remoteSeen is the commit of the task's branch on [fleet] remote as
	// this run last saw it (fetched at the launch, or its own push; ""
	// for absent), which a push must find there (--force-with-lease);
	// remoteKnown says the fetch or a push told it.
	remoteSeen  string
	remoteKnown bool
	// early are the worker's reports that arrived before its launch was
	// applied on the loop; they are handled, in order, right after it.
	early []worker.Report
}

// DefaultHarness runs a task that names none.
const DefaultHarness = "scripted"

func harnessOf(t task.Task) string {
	if t.Harness == "" {
		return DefaultHarness
	}
	return t.Harness
}

// short is the last 8 characters of a session id, as texts show it.
func short(id string) string {
	if len(id) > 8 {
		return id[len(id)-8:]
	}
	return id
}

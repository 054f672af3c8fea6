// Package coord is the coordinator: queue, placement, phase advance and
// finalisation. It is the only writer of task state.
//
// This file is the seam the UI depends on: snapshots to read, commands to
// send, notices to subscribe to. The in-process coordinator implements it; UI
// tests use a stub.
package coord

import (
	"context"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// Engine is everything the UI may know about or ask of the engine.
type Engine interface {
	// Snapshot returns the current state of every task, cheaply, from memory.
	Snapshot() Snapshot
	// Subscribe returns a channel of notices and a function that ends the
	// subscription. Pane notices are lossy (a slow reader misses some and
	// pulls the newest screen anyway); event notices are never dropped
	// while the reader keeps up: one that falls more than MaxBacklog events
	// behind gets a Behind notice and its channel closes.
	Subscribe() (<-chan Notice, func())
	// Pane returns the live terminal of the task's current session.
	Pane(id task.ID) (session.View, bool)
	// Detail returns the slower facts of one task: its ledger, brief,
	// verdict history and sessions, narrowed by q to what changed since
	// the caller's last read (the zero DetailQuery reads everything). It
	// reads the store: call it from a tea.Cmd, never from Update or View.
	Detail(ctx context.Context, id task.ID, q DetailQuery) (Detail, error)
	// Do sends an operator command to the coordinator and waits for its
	// result. Call it from a tea.Cmd.
	Do(ctx context.Context, c Command) (Result, error)
	// Input types raw bytes into the task's live pane (focus mode).
	Input(id task.ID, b []byte) error
	// ResizePane resizes the task's live pty and emulator.
	ResizePane(id task.ID, cols, rows int) error
}

// Snapshot is the engine's state at one instant.
type Snapshot struct {
	At time.Time
	// Gen grows with every snapshot the coordinator publishes: two with the
	// same Gen differ only in their clocks, so a reader can skip comparing
	// them. Zero from an engine that does not count.
	Gen   uint64
	Tasks []TaskView // sorted by task id (creation order)
	Slots []SlotView
	// Bases are the trained bases in use, oldest first, with their cache
	// clocks computed at read time.
	Bases []BaseView
	// StoreFault, when set, says the store failed (deleted, read-only, a
	// failed write) and what to do: placement has stopped, and nothing
	// recorded since can be trusted.
	StoreFault string
	// SteppedDown, when set, says the engine stepped down: its heartbeat
	// has not landed for most of a TTL, so it places and pushes nothing
	// and its sessions are frozen until it lands again (stepdown.go).
	SteppedDown string
	// Budget is [budget] with the day's spend; nil when no budget is set.
	Budget *BudgetView `json:",omitempty"`
}

// TaskView is one task as the UI shows it.
type TaskView struct {
	Task      task.Task
	SessionID string          `json:",omitempty"` // the live session, if any
	Lease     *LeaseView      `json:",omitempty"`
	Verdict   *verify.Verdict `json:",omitempty"` // the latest verdict, if any
	// Flag is a short operator-facing reason the task needs attention
	// ("stuck 45s", "unplaceable: no slot offers gpu"); empty when none.
	Flag  string `json:",omitempty"`
	Stuck bool   `json:",omitempty"`
	// Working, for a live session whose screen has been still for
	// stuck.after but whose processes keep working, says why it is not
	// flagged stuck ("working: 42 s CPU in the last minute"); no alarm.
	Working string `json:",omitempty"`
	// LimitReset is when the provider's limit the session waits for
	// resets (the flag says which), for a countdown; zero for none.
	LimitReset time.Time `json:",omitzero"`
	// Gate is set while the verify gate re-runs the tests for this task,
	// between its session's end and the verdict, and while the last green
	// gate's work is committed (a moment).
	Gate   bool     `json:",omitempty"`
	Usage  Usage    `json:",omitzero"`
	Models []string `json:",omitempty"` // full model ids of the sessions that ran it
	// Disk is what the task holds on disk (worktree, recordings), measured
	// off the loop when its phase or state changes.
	Disk DiskUse `json:",omitzero"`
	// Host is the machine whose engine runs the task (leased, running, or
	// in its verify gate) when engines share a store; empty otherwise.
	Host string `json:",omitempty"`
	// PR is the task's pull request ([finalise] pr) as last polled.
	PR *task.PullData `json:",omitempty"`
}

// LeaseView is a lease with its clocks computed for display.
type LeaseView struct {
	Token          int64
	Holder         string
	Deadline       time.Time
	Remaining      time.Duration
	WindowOpensIn  time.Duration // zero once the renewal window is open
	SinceProgress  time.Duration
	Renewals       int
	MaxRenewals    int
	LastDecision   string
	LastReason     task.Reason
	LastReasonText string

	lastProgress time.Time // the clocks above are computed from these at read time
	windowOpens  time.Time
}

// SlotView is one worker slot.
type SlotView struct {
	Name     string
	Harness  string
	Capacity int
	Busy     int
}

// Usage is what the agents reported spending.
type Usage struct {
	InputTokens         int64   `json:",omitempty"`
	OutputTokens        int64   `json:",omitempty"`
	CacheCreationTokens int64   `json:",omitempty"`
	CacheReadTokens     int64   `json:",omitempty"`
	CostUSD             float64 `json:",omitempty"`
	// Models are the model ids the usage records named: the models that
	// really answered, whatever was asked for.
	Models []string `json:",omitempty"`
	// Phases splits the figures above by phase (their own Phases unset).
	Phases map[task.Phase]Usage `json:",omitempty"`
	// LowerBound, when set, says the figures are at least these, and
	// why: a session's CLI made requests it records nowhere (shown "≥").
	LowerBound string `json:",omitempty"`
}

// DetailQuery narrows a Detail read to what changed, so a reader that
// follows a long run pays per new event, not per event in the ledger.
type DetailQuery struct {
	// AfterSeq reads only the ledger events after this sequence number.
	AfterSeq int64 `json:"after_seq,omitempty"`
	// EventsOnly skips the sessions, brief, verdicts and decisions, which
	// change only with a few kinds of events (RecordKind).
	EventsOnly bool `json:"events_only,omitempty"`
}

// RecordKind reports whether an event of kind k may change what Detail
// reads besides the ledger (the task, its sessions and brief, verdicts,
// decisions): a reader that saw only other kinds can ask EventsOnly.
func RecordKind(k task.Kind) bool {
	switch k {
	case task.EvLeaseRenewed, task.EvLeaseExtended, task.EvUsage, task.EvSessionStuck,
		task.EvResubmitted, task.EvVerifyStarted, task.EvBasePolicy:
		return false
	}
	return true
}

// Detail is the slower, per-task view.
type Detail struct {
	Task      task.Task
	Events    []task.Event
	Brief     string // the exact brief the current or last session received
	Verdicts  []store.VerdictRecord
	Sessions  []store.Session
	Decisions []store.Decision
	// LastScreen is the last session's final screen once it has ended,
	// replayed from its recording on the engine's machine; nil while a
	// session is live, and from ReadDetail, which has no machine to read
	// recordings on.
	LastScreen *LastScreen `json:",omitempty"`
}

// CommandKind names an operator command.
type CommandKind string

// Operator commands.
const (
	CmdAdd      CommandKind = "add"
	CmdCorrect  CommandKind = "correct"
	CmdResubmit CommandKind = "resubmit"
	CmdExtend   CommandKind = "extend"
	CmdExpire   CommandKind = "expire"
	CmdCancel   CommandKind = "cancel"
	// CmdRefuse records a refusal the operator sees: a forge comment by
	// someone not allowed to correct the task, never delivered.
	CmdRefuse  CommandKind = "refuse"
	CmdPark    CommandKind = "park"
	CmdUnpark  CommandKind = "unpark"
	CmdApprove CommandKind = "approve"
	// CmdRetry requeues a failed or cancelled task with a fresh attempt
	// budget; its dead ends are kept.
	CmdRetry CommandKind = "retry"
	// CmdMerge merges an approved task's branch into the checked-out
	// branch ([finalise] merge says how).
	CmdMerge CommandKind = "merge"
	// CmdRequestChanges sends a task awaiting review back to implement
	// with every open review comment, no attempt charged (review.go).
	CmdRequestChanges CommandKind = "request-changes"
	// CmdResolve marks the review comment Text (a decision id) resolved.
	CmdResolve CommandKind = "resolve"
	// CmdResume creates a task from a handoff file (Path) and starts it
	// from the phase it reached, optionally on another Harness or Model.
	CmdResume CommandKind = "resume"
)

// Fork commands: trained bases and forks of them (package fork). They run
// in the caller's goroutine, never on the loop, because the agent takes
// seconds to answer; what they write reaches subscribers through the loop.
const (
	// CmdForkTrain trains a base for TaskID from its background; Text
	// names the harness (empty: the task's).
	CmdForkTrain CommandKind = "fork-train"
	// CmdForkRun runs Text as a block in a fork of TaskID's newest base.
	CmdForkRun CommandKind = "fork-run"
	// CmdForkList lists the trained bases with their cache clocks and the
	// policy's next action; TaskID, if set, narrows it to one task.
	CmdForkList CommandKind = "fork-list"
)

// Command is one operator command.
type Command struct {
	Kind     CommandKind
	TaskID   task.ID
	Text     string        // correction text
	Author   string        // who gave the command
	Duration time.Duration // for extend
	Task     *task.Task    // for add
	Path     string        // for resume: the handoff file
	Harness  string        // for resume: replaces the file's harness
	Model    string        // for resume: replaces the file's model
	// Anchor makes a correction a review comment on a line of the diff.
	Anchor *store.Anchor `json:",omitempty"`
	// DecisionID, for a correct or refuse from a forge comment, is the id
	// derived from the comment (CommentDecisionID): the store keeps one
	// decision or refusal per id, so a comment read twice is one.
	DecisionID string `json:",omitempty"`
	// Source and Issue, for add, are where the task came from: an issue's
	// URL and number, kept in its task.added event's Data.
	Source string `json:",omitempty"`
	Issue  int    `json:",omitempty"`
}

// Result is what the coordinator did with a command, in a sentence.
type Result struct {
	Message   string // e.g. "delivered to session 01J…", "queued for the next brief"
	TaskID    task.ID
	SessionID string
	Delivered bool
}

// Notice tells subscribers something changed.
type Notice struct {
	// Event is set for ledger events; these are never dropped.
	Event *task.Event
	// Pane is set when a pane's screen changed; these are lossy.
	Pane task.ID
	// Behind is set on the last notice of a subscription that stopped
	// reading while more than MaxBacklog events queued up for it. Every
	// event before it was delivered, in order; later ones are in the
	// ledger (Detail) but not on this channel, which closes next.
	// Subscribe again to follow on.
	Behind bool
	// Snapshot is set when a snapshot arrived that no event announced (a
	// slot freed, a session relayed from another engine appearing, a lease
	// renewed): read Snapshot again. It is coalesced like a pane notice, so
	// a reader that reads slowly sees one for every change since its last
	// read. The engine client (package engine) sends it for every snapshot
	// its engine pushes; the in-process coordinator, whose snapshot a
	// console reads on each event and lease tick, sends none.
	Snapshot bool
}

// Package store is the durable state behind an interface. The coordinator is
// its only writer of task state; every write is one transaction. SQLite is the
// default driver; every driver passes the conformance suite in storetest.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Errors a driver returns. Callers test them with errors.Is.
var (
	ErrNotFound = errors.New("not found")
	// ErrConflict means a guarded write found the row in another state or
	// under another lease token than the caller expected.
	ErrConflict = errors.New("conflict: the row changed under the writer")
	// ErrStaleToken means a fenced write carried a lease token that is no
	// longer the task's current one.
	ErrStaleToken = errors.New("stale lease token")
	// ErrForeign means the file exists but is not an orchestra store.
	ErrForeign = errors.New("not an orchestra store")
	// ErrTooNew means the store was written by a newer orchestra-tui.
	ErrTooNew = errors.New("store schema is newer than this binary")
)

// Decision is a human correction. It is durable and outranks the plan.
type Decision struct {
	ID     string    `json:"id"` // ULID
	TaskID task.ID   `json:"task_id"`
	Text   string    `json:"text"`
	Author string    `json:"author"`
	At     time.Time `json:"at"`
	// Anchor, when set, makes the decision a review comment on a line of
	// the task's diff.
	Anchor *Anchor `json:"anchor,omitempty"`
	// ResolvedAt is when the operator marked a comment resolved; zero
	// while it is open. A resolved decision no longer goes into briefs.
	ResolvedAt time.Time `json:"resolved_at,omitzero"`
}

// Anchor is where a review comment was made: a file, a line of it, and the
// text of the hunk that line was in, so a later diff tells whether the
// lines it was made on changed since (the comment is then outdated).
type Anchor struct {
	File string `json:"file"`
	Line int    `json:"line"`
	// Old says Line numbers the old side (a removed line).
	Old bool `json:"old,omitempty"`
	// LineText is the commented line as it was; Hunk the whole hunk.
	LineText string `json:"line_text"`
	Hunk     string `json:"hunk"`
}

// Where is the anchor as the operator reads it: "calc.go:5" ("calc.go:5
// (old)" for a removed line).
func (a Anchor) Where() string {
	s := a.File + ":" + strconv.Itoa(a.Line)
	if a.Old {
		s += " (old)"
	}
	return s
}

// Delivery records that a decision was typed into one session's pane.
type Delivery struct {
	DecisionID string    `json:"decision_id"`
	SessionID  string    `json:"session_id"`
	At         time.Time `json:"at"`
}

// SessionStatus is where a session is in its life.
type SessionStatus string

// Session statuses.
const (
	SessionLaunching SessionStatus = "launching"
	SessionConfirmed SessionStatus = "confirmed"
	SessionExited    SessionStatus = "exited"
	SessionKilled    SessionStatus = "killed"
)

// Session is one agent process for one phase attempt of one task.
type Session struct {
	ID      string     `json:"id"` // ULID
	TaskID  task.ID    `json:"task_id"`
	Phase   task.Phase `json:"phase"`
	Attempt int        `json:"attempt"`
	Harness string     `json:"harness"`
	Model   string     `json:"model,omitempty"`
	Token   int64      `json:"token"` // lease token it ran under
	// Fence, when non-zero, fences the write: SessionInsert is refused
	// with ErrStaleToken unless Fence is the task's current token and its
	// lease row's (CheckFence), SessionUpdate once a newer token was
	// granted (CheckGrant). The engine running the session sets it to its
	// token; a rescue marking another engine's session killed leaves it
	// zero. It is not stored.
	Fence       int64         `json:"-"`
	Holder      string        `json:"holder"` // console instance that launched it
	Status      SessionStatus `json:"status"`
	ExitCode    int           `json:"exit_code"`
	CastPath    string        `json:"cast_path,omitempty"` // relative to the repo root
	Brief       string        `json:"brief"`               // the exact brief delivered
	Fingerprint string        `json:"fingerprint,omitempty"`
	Continuity  string        `json:"continuity,omitempty"` // captured when it ended
	StartedAt   time.Time     `json:"started_at"`
	EndedAt     time.Time     `json:"ended_at,omitzero"`
}

// Artifact is a sealed phase artifact.
type Artifact struct {
	TaskID  task.ID    `json:"task_id"`
	Phase   task.Phase `json:"phase"`
	Content []byte     `json:"content"`
	SHA256  string     `json:"sha256"` // hex
	Session string     `json:"session_id"`
	At      time.Time  `json:"at"`
}

// VerdictRecord is one verify run of a task.
type VerdictRecord struct {
	TaskID    task.ID      `json:"task_id"`
	SessionID string       `json:"session_id,omitempty"`
	Phase     task.Phase   `json:"phase"`
	Verdict   task.Verdict `json:"verdict"`
	// Token, when non-zero, fences VerdictInsert: the verdict is refused
	// with ErrStaleToken unless it is the task's current token and its
	// lease row's (CheckFence), so a gate that outlived its engine's lease
	// records nothing. It is not stored.
	Token int64 `json:"-"`
}

// DeadEnd is an approach an earlier attempt tried that ended in a known
// failure; later briefs list it so the next session does not repeat it.
type DeadEnd struct {
	TaskID  task.ID    `json:"task_id"`
	Phase   task.Phase `json:"phase"`
	Attempt int        `json:"attempt"`
	Text    string     `json:"text"`
	At      time.Time  `json:"at"`
}

// Base is a trained base conversation: an agent session that was given a
// task's background once, which later blocks and phases resume as forks so
// they read it from the prompt cache instead of being taught again.
type Base struct {
	// ID is the agent's own conversation id, the one a fork resumes
	// (claude --resume ID --fork-session).
	ID      string  `json:"id"`
	TaskID  task.ID `json:"task_id"`
	Harness string  `json:"harness"`
	// Model is the model that answered the training, as it reported.
	Model string `json:"model,omitempty"`
	// Fingerprint is the session.Launch JSON the base ran with; a fork is
	// launched only on an equal fingerprint (FingerprintHash).
	Fingerprint     string `json:"fingerprint"`
	FingerprintHash string `json:"fingerprint_hash"`
	// Training is the task.UsageTotals JSON of the training run: what a
	// retrain would pay again.
	Training  string    `json:"training"`
	CreatedAt time.Time `json:"created_at"`
	// LastHitAt is when a fork last read the base from the prompt cache;
	// CreatedAt until one does. The cache clock runs from it.
	LastHitAt time.Time `json:"last_hit_at"`
	// LastUsedAt is when the base last did real work: its training or a
	// fork that ran a block. Keep-warm pings do not move it, so the policy
	// expects the next fork from real use, not from its own pings.
	LastUsedAt time.Time `json:"last_used_at"`
	Forks      int       `json:"forks"`
	// RetiredAt is set when the base was replaced by a retrain or dropped;
	// zero while it is in use.
	RetiredAt time.Time `json:"retired_at,omitzero"`
}

// TaskListParams filters TaskList. Zero values mean "any".
type TaskListParams struct {
	States []task.State
}

// TaskUpdateParams is a guarded write of a task's coordinator-owned fields
// (State, Phase, Attempt, BaseCommit, Branch, Reason, UpdatedAt; the
// operator's fields are left as stored). It writes the State given without
// task.Apply, so the engine never changes a state with it (its state
// changes are TaskTransitions); tests use it to stage a task in a state. The write succeeds only if the
// stored task is in ExpectState (else ErrConflict) and, when ExpectToken is
// non-zero, the task's current lease token equals it (else ErrStaleToken or
// ErrConflict). Events are appended in the same transaction; a refused write
// appends none.
type TaskUpdateParams struct {
	Task        task.Task
	ExpectState task.State
	ExpectToken int64
	Events      []task.Event
}

// EventListParams filters EventList. An empty TaskID lists every task.
type EventListParams struct {
	TaskID   task.ID
	AfterSeq int64
	Limit    int // 0 means no limit
}

// LeaseGrantParams grants a new lease on a task, moving it to leased in the
// same transaction. The store assigns the next fencing token: the task's
// previous token plus one, the first being 1, even after LeaseDelete. The
// granted lease's LastProgressAt is GrantedAt.
type LeaseGrantParams struct {
	TaskID      task.ID
	Holder      string
	ExpectState task.State // usually queued
	GrantedAt   time.Time
	Deadline    time.Time
	Baseline    lease.Progress
	Events      []task.Event
}

// LeaseClaimParams claims one queued task for Holder: the first of
// Candidates, in the order given, that is still queued (and, on PostgreSQL,
// not locked by another transaction at that instant: FOR UPDATE SKIP
// LOCKED), moved to leased under a new lease in the same transaction, as
// LeaseGrant does. Engines sharing a store each offer the tasks their free
// slots can run, from views that may be a moment old; each task goes to
// exactly one of them, and none waits on another's claim.
type LeaseClaimParams struct {
	Candidates []task.ID
	Holder     string
	GrantedAt  time.Time
	Deadline   time.Time
	// Events returns the events appended with the grant, given the task
	// as stored before it.
	Events func(task.Task) []task.Event
	// Edit sets the coordinator-owned fields of the leased task (Claim
	// counts the attempt); the state is task.Apply's (ActLease).
	Edit func(*task.Task)
}

// LeaseUpdateParams writes a renewed or annotated lease, fenced by Token.
type LeaseUpdateParams struct {
	Lease  lease.Lease
	Events []task.Event
}

// ArtifactSealParams seals an artifact, fenced by the lease token.
type ArtifactSealParams struct {
	TaskID    task.ID
	Token     int64
	Phase     task.Phase
	Content   []byte
	SessionID string
	At        time.Time
	Events    []task.Event
}

// TaskImportParams carries a task that arrives with a history, such as a
// task resumed from a handoff file: the task, its sessions, sealed artifacts,
// decisions and dead ends, written in one transaction so a resume that fails
// leaves nothing behind. Artifacts are imported as sealed elsewhere; they are
// not fenced by a lease token, which the new task does not have yet. Each
// record's TaskID must be the task's ID.
type TaskImportParams struct {
	Task      task.Task
	Sessions  []Session
	Artifacts []Artifact // SHA256 is recomputed from Content
	Decisions []Decision
	DeadEnds  []DeadEnd
	Events    []task.Event
}

// TaskSummary is one task as the task list shows it.
type TaskSummary struct {
	Task task.Task
	// Verdict is the task's latest verify run, nil before the first.
	Verdict *task.Verdict
	// Models are the distinct non-empty models of its sessions, in the order
	// they first ran.
	Models []string
}

// TaskStatus is one line of `orchestra-tui status`: the task's state and
// its latest verdict, without the rest of the task.
type TaskStatus struct {
	ID      task.ID
	Title   string
	State   task.State
	Phase   task.Phase
	Attempt int
	Reason  string
	// Verdict is the latest verify run's status and counts (what
	// task.Verdict.Line shows), nil before the first.
	Verdict *task.Verdict
}

// UsageData is the Data of a session.usage event, as far as the store reads
// it: the phase the session ran and what it reported spending. Writers may
// add fields of their own.
type UsageData struct {
	SessionID string           `json:"session_id"`
	Phase     task.Phase       `json:"phase"`
	Totals    task.UsageTotals `json:"totals"`
	// LowerBound, when set, says the totals are at least these and why:
	// the session's CLI makes requests it records nowhere.
	LowerBound string `json:"lower_bound,omitempty"`
}

// UsageTotal is the sum of a task's session.usage events in one phase.
type UsageTotal struct {
	TaskID task.ID
	Phase  task.Phase
	Totals task.UsageTotals
	// LowerBound is the mark of the latest of its events that carried one
	// (UsageData.LowerBound): set, the totals are at least these.
	LowerBound string
}

// Engine is one engine process serving a repository from this store, as
// its heartbeat last recorded it. Several engines, on several machines,
// share a PostgreSQL store; a SQLite store has one at a time.
type Engine struct {
	// ID is the engine's lease holder name, unique per engine instance.
	ID      string `json:"id"`
	Host    string `json:"host"`
	Pid     int    `json:"pid"`
	Version string `json:"version"`
	// Repo is the repository's root on the engine's host.
	Repo string `json:"repo"`
	// SSH is the ssh destination ([user@]host) at which another machine
	// reaches the engine's host, and Bin the path of its orchestra-tui
	// there: another engine runs `ssh SSH Bin attach --stdio -C Repo` to
	// draw the panes of this engine's sessions.
	SSH string `json:"ssh,omitempty"`
	Bin string `json:"bin,omitempty"`
	// Slots is how many sessions it can run at once; Busy how many run.
	Slots       int       `json:"slots"`
	Busy        int       `json:"busy"`
	StartedAt   time.Time `json:"started_at"`
	HeartbeatAt time.Time `json:"heartbeat_at"`
	// StoppedAt is set when the engine stopped cleanly; zero while it runs
	// or after it died without saying so (its heartbeat then ages).
	StoppedAt time.Time `json:"stopped_at,omitzero"`
	// Kept is set with StoppedAt when the engine stopped leaving its
	// agents running for its machine's next engine (`stop
	// --keep-agents`, an upgrade): the stop counts as its last heartbeat,
	// and its leases stay its own until that beat is older than the TTL,
	// so no other machine's engine takes them over while the next engine
	// here may still take the agents up.
	Kept bool `json:"kept,omitempty"`
	// StoreClock is set by a store that several machines share
	// (PostgreSQL): it stamps HeartbeatAt and StoppedAt with its own clock
	// at the write, whatever the writer passed, and BeatAge is how old the
	// heartbeat was when the row was read, by that same clock. Liveness is
	// then judged by one clock, not by the writer's against the reader's.
	StoreClock bool          `json:"-"`
	BeatAge    time.Duration `json:"-"`
}

// HeartbeatAge is how long before now the engine's last heartbeat was: by
// the store's clock where it keeps one (StoreClock), by now otherwise.
func (e Engine) HeartbeatAge(now time.Time) time.Duration {
	if e.StoreClock {
		return e.BeatAge
	}
	return now.Sub(e.HeartbeatAt)
}

// Store is the durable state. Methods name the noun first. Every write is one
// transaction; events passed with a write are appended in that transaction,
// and a write that fails appends none. Times come back in UTC, exact to at
// least the millisecond. Lists return oldest first. storetest.Run is the
// executable form of this contract.
type Store interface {
	// TaskInsert stores a new task and its events.
	TaskInsert(ctx context.Context, t task.Task, events ...task.Event) error
	TaskGet(ctx context.Context, id task.ID) (task.Task, error)
	TaskList(ctx context.Context, p TaskListParams) ([]task.Task, error)
	// TaskUpdate is the guarded write; see TaskUpdateParams.
	TaskUpdate(ctx context.Context, p TaskUpdateParams) error
	// TaskTransition is the one state change: task.Apply, the edit, the
	// events and the lease grant, rewrite or release in one transaction,
	// fenced by the lease token; see TaskTransitionParams.
	TaskTransition(ctx context.Context, p TaskTransitionParams) (TaskTransitionResult, error)
	// TaskToken returns the task's current lease token (0 before any grant).
	TaskToken(ctx context.Context, id task.ID) (int64, error)
	// TaskSign records the signature of a task that has none (a task from
	// before signing, signed at the upgrade; package sign). A task that
	// already has one keeps it: the write reports ErrConflict.
	TaskSign(ctx context.Context, id task.ID, signature string) error
	// TaskImport stores a new task with its history, all or nothing; see
	// TaskImportParams.
	TaskImport(ctx context.Context, p TaskImportParams) error
	// TaskSummaries returns every task with its latest verdict (its
	// output Tail may be left out: VerdictList has it) and the models its
	// sessions ran, oldest task first, in one query: what the task list
	// shows, at a cost that does not grow with the ledger.
	TaskSummaries(ctx context.Context) ([]TaskSummary, error)
	// TaskStatusList returns every task's status line, oldest task first:
	// TaskSummaries narrowed to what `status` prints, so a CLI call on a
	// store of thousands of tasks reads a few columns and decodes nothing.
	TaskStatusList(ctx context.Context) ([]TaskStatus, error)

	// UsageList returns what every task's sessions reported spending, per
	// task and phase. The store keeps these sums itself: every session.usage
	// event appended (by any write, import included) whose Data is a
	// UsageData adds its totals in the same transaction, so reading them
	// never scans the ledger.
	UsageList(ctx context.Context) ([]UsageTotal, error)

	// EventAppend appends events to the ledger; the store assigns Seq,
	// strictly increasing, and a ULID to an event with no ID.
	EventAppend(ctx context.Context, events ...task.Event) error
	// EventAppendFenced appends events of one task (every event's TaskID
	// the same) only while token holds it (CheckFence), else
	// ErrStaleToken and nothing is appended: what an engine records about
	// a task it runs.
	EventAppendFenced(ctx context.Context, token int64, events ...task.Event) error
	EventList(ctx context.Context, p EventListParams) ([]task.Event, error)
	// EventLastSeq returns the newest event's Seq, 0 for an empty ledger:
	// where a reader that wants only what comes next starts.
	EventLastSeq(ctx context.Context) (int64, error)
	// EventSeqs returns the ledger position (Seq) of each event of ids
	// that is in the ledger; an id that is not is absent from the map.
	// The coordinator stamps the events it publishes with it, so a live
	// follower sees the same seq a later read of the ledger gives.
	EventSeqs(ctx context.Context, ids []string) (map[string]int64, error)

	DecisionInsert(ctx context.Context, d Decision, events ...task.Event) error
	DecisionList(ctx context.Context, taskID task.ID) ([]Decision, error)
	// DecisionResolve marks a decision resolved at at, with its events;
	// ErrNotFound when the task has no such decision.
	DecisionResolve(ctx context.Context, taskID task.ID, id string, at time.Time, events ...task.Event) error
	// DeliveryInsert records a delivery and its events in one transaction.
	// It returns false, and writes nothing, when that decision was already
	// delivered to that session.
	DeliveryInsert(ctx context.Context, d Delivery, events ...task.Event) (bool, error)
	// DecisionDeliver records a new decision and its delivery to a
	// session, with their events, in one transaction: an operator's
	// correction typed into a live pane at once. Either all of it is
	// written or none.
	DecisionDeliver(ctx context.Context, d Decision, dl Delivery, events ...task.Event) error
	DeliveryList(ctx context.Context, taskID task.ID) ([]Delivery, error)

	SessionInsert(ctx context.Context, s Session, events ...task.Event) error
	SessionUpdate(ctx context.Context, s Session, events ...task.Event) error
	SessionGet(ctx context.Context, id string) (Session, error)
	SessionList(ctx context.Context, taskID task.ID) ([]Session, error)
	// SessionListLive returns the sessions of every task still recorded
	// as launching or confirmed, in launch order: what a starting engine
	// checks, at a cost that grows with the live sessions, not the history.
	SessionListLive(ctx context.Context) ([]Session, error)

	// ArtifactSeal records the content and its sha256 (lowercase hex);
	// ErrStaleToken when the token is not the task's current one and its
	// lease row's (CheckFence; token 0 never is).
	ArtifactSeal(ctx context.Context, p ArtifactSealParams) (Artifact, error)
	ArtifactList(ctx context.Context, taskID task.ID) ([]Artifact, error)

	// LeaseGrant assigns the next token, stores the lease and moves the task
	// to leased, guarded by ExpectState.
	LeaseGrant(ctx context.Context, p LeaseGrantParams) (lease.Lease, error)
	// LeaseClaim grants a lease on the first claimable candidate through
	// the same transition as TaskTransition (ActLease); see
	// LeaseClaimParams. It returns the task as it was before the grant
	// (queued) and as written (leased), and ErrNotFound when no candidate
	// is queued any more.
	LeaseClaim(ctx context.Context, p LeaseClaimParams) (TaskTransitionResult, error)
	LeaseGet(ctx context.Context, taskID task.ID) (lease.Lease, error)
	// LeaseUpdate writes a lease; ErrStaleToken if its token is not current,
	// ErrNotFound if the lease was deleted.
	LeaseUpdate(ctx context.Context, p LeaseUpdateParams) error
	// LeaseDelete removes the task's lease if it still has token; a stale
	// token is ErrStaleToken, no lease at all is ErrNotFound. The task keeps
	// its token.
	LeaseDelete(ctx context.Context, taskID task.ID, token int64) error
	LeaseList(ctx context.Context) ([]lease.Lease, error)

	VerdictInsert(ctx context.Context, v VerdictRecord, events ...task.Event) error
	VerdictList(ctx context.Context, taskID task.ID) ([]VerdictRecord, error)

	DeadEndInsert(ctx context.Context, d DeadEnd, events ...task.Event) error
	DeadEndList(ctx context.Context, taskID task.ID) ([]DeadEnd, error)

	// BaseInsert stores a newly trained base and its events.
	BaseInsert(ctx context.Context, b Base, events ...task.Event) error
	// BaseGet returns one base, or ErrNotFound.
	BaseGet(ctx context.Context, id string) (Base, error)
	// BaseList returns the bases of a task (every task's when taskID is
	// empty), oldest first.
	BaseList(ctx context.Context, taskID task.ID) ([]Base, error)
	// BaseUpdate rewrites a base's LastHitAt, Forks and RetiredAt with its
	// events; ErrNotFound when there is no such base. What a base was
	// trained with never changes: a different training is a new base.
	BaseUpdate(ctx context.Context, b Base, events ...task.Event) error

	// EngineHeartbeat records an engine's liveness and load, inserting it
	// on its first beat and rewriting every field after.
	EngineHeartbeat(ctx context.Context, e Engine) error
	// EngineList returns every recorded engine, most recent heartbeat
	// first.
	EngineList(ctx context.Context) ([]Engine, error)

	// CursorGet returns how far a forge source has read one of its
	// lists, or ErrNotFound when it has not recorded one.
	CursorGet(ctx context.Context, source, what string) (Cursor, error)
	// CursorPut records a source's cursor, inserting it on the first
	// write. Since never moves back (the later of the two is kept: two
	// engines reading one list each record only what they recorded), and
	// a Ref of 0 keeps the recorded one.
	CursorPut(ctx context.Context, c Cursor) error

	// Listen returns a channel that receives a signal after writes commit
	// (coalesced: at most one pending per listener, so read the ledger after
	// the last Seq seen on each), and closes when ctx ends or the store
	// closes. Every driver signals its own writes; PostgreSQL also signals
	// writes of every other process on the same database (LISTEN/NOTIFY).
	Listen(ctx context.Context) (<-chan struct{}, error)

	Close() error
}

// Check reports the first record of p that belongs to another task than
// p.Task; a driver refuses such an import before writing anything.
func (p TaskImportParams) Check() error {
	id := p.Task.ID
	mismatch := func(what string, got task.ID) error {
		return fmt.Errorf("import task %s: a %s belongs to task %s", id, what, got)
	}
	for _, s := range p.Sessions {
		if s.TaskID != id {
			return mismatch("session", s.TaskID)
		}
	}
	for _, a := range p.Artifacts {
		if a.TaskID != id {
			return mismatch("artifact", a.TaskID)
		}
	}
	for _, d := range p.Decisions {
		if d.TaskID != id {
			return mismatch("decision", d.TaskID)
		}
	}
	for _, d := range p.DeadEnds {
		if d.TaskID != id {
			return mismatch("dead end", d.TaskID)
		}
	}
	return nil
}

// ParseAnchor reads an anchor as the drivers store it (JSON); nil for "".
func ParseAnchor(s string) (*Anchor, error) {
	if s == "" {
		return nil, nil
	}
	var a Anchor
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return nil, fmt.Errorf("read a comment's anchor: %w", err)
	}
	return &a, nil
}

// Package handoff is the portable handoff document: one JSON file that carries
// a half-done task to another model or another machine. It holds the task,
// how far it got, the sealed artifacts, the human decisions, the dead ends and
// the continuity of the last session, plus the identity of the repository it
// belongs to, and a digest so that a file edited by hand is refused.
//
// The life of a handoff file:
//
//	exporter (coord)            file                 resume (coord)
//	  facts from store ──▶ Document ─Marshal─▶ bytes ─Parse─▶ Document ─Check(local repo)─▶ requeue
//	                              (Seal: digest)        (strict: shape, version,
//	                                                     digest, fields, paths)
//
// The document itself (Marshal, Parse, Check) is pure. Export and Resume
// are the two ends that touch a store and a git checkout: Export reads the
// task's records and commits its worktree to its branch; Resume checks the
// identity, brings the branch in and imports the task in one transaction.
package handoff

import (
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// Version is the handoff format this build writes and the newest it reads.
const Version = 1

// MaxBytes caps the size of a handoff file Parse accepts. Five artifacts of
// at most task.MaxArtifactBytes each, escaped as JSON strings, fit with room
// to spare; anything larger is not a handoff this program wrote.
const MaxBytes = 16 << 20

// Identity names the repository and the branch a handoff belongs to. The root
// commit is what makes two checkouts "the same repository": origin URLs
// differ between forks and machines, the first commit does not.
type Identity struct {
	Origin     string `json:"origin,omitempty"` // URL of the exporter's origin remote, without credentials
	RootCommit string `json:"root_commit"`      // first commit of the repository's history, 40 hex
	BaseCommit string `json:"base_commit"`      // commit the task's branch started from, 40 hex
	Branch     string `json:"branch,omitempty"` // the task's branch
	BranchHead string `json:"branch_head,omitempty"`
}

// TaskInfo is the operator-given part of a task: what it is for and how it
// is judged. Coordinator-owned state (state, lease, attempt) is not carried;
// the resuming side derives it.
type TaskInfo struct {
	ID           task.ID       `json:"id"`
	Title        string        `json:"title"`
	Goal         string        `json:"goal"`
	Acceptance   []string      `json:"acceptance,omitempty"`
	Verify       string        `json:"verify"`
	Pipeline     task.Pipeline `json:"pipeline"`
	Harness      string        `json:"harness,omitempty"`
	Model        string        `json:"model,omitempty"` // full model id
	Capabilities []string      `json:"capabilities,omitempty"`
}

// SessionInfo summarises one agent session of the task.
type SessionInfo struct {
	Phase     task.Phase `json:"phase"`
	Attempt   int        `json:"attempt"`
	Harness   string     `json:"harness"`
	Model     string     `json:"model,omitempty"` // full model id
	Ended     string     `json:"ended,omitempty"` // how it ended: exited, killed, lease expired…
	StartedAt time.Time  `json:"started_at"`
	EndedAt   time.Time  `json:"ended_at,omitzero"`
	// Usage is what the session's CLI recorded spending, nil when it
	// recorded nothing the console reads.
	Usage *SessionUsage `json:"usage,omitempty"`
}

// SessionUsage is one session's tokens and cost as the console recorded
// them from the CLI's own records.
type SessionUsage struct {
	Tokens  task.Tokens `json:"tokens"`
	CostUSD float64     `json:"cost_usd"`
	// LowerBound, when set, says the figures are at least these and why:
	// the CLI made requests it records nowhere.
	LowerBound string `json:"lower_bound,omitempty"`
}

// Verdict is the last verify gate result, without the exporting machine's
// output tail (which is full of its paths).
type Verdict struct {
	Status  verify.Status `json:"status"`
	Line    string        `json:"line,omitempty"` // the recognised summary line
	Passed  int           `json:"passed"`
	Failed  int           `json:"failed"`
	Skipped int           `json:"skipped"`
	Counted bool          `json:"counted"`
}

// Artifact is one sealed phase artifact. Content is carried as a string of
// the exact sealed bytes rather than as embedded JSON, because re-indenting
// embedded JSON would change the bytes and break the recorded SHA256.
type Artifact struct {
	Phase   task.Phase `json:"phase"`
	SHA256  string     `json:"sha256"` // hex sha256 of Content
	Content string     `json:"content"`
}

// Decision is a human correction, carried so it keeps outranking the plan.
type Decision struct {
	ID     string    `json:"id"`
	Text   string    `json:"text"`
	Author string    `json:"author,omitempty"`
	At     time.Time `json:"at"`
}

// Continuity is what the last session left behind for the next one.
type Continuity struct {
	Harness      string     `json:"harness,omitempty"`
	Model        string     `json:"model,omitempty"`
	SessionID    string     `json:"session_id,omitempty"`
	Phase        task.Phase `json:"phase"`
	Attempt      int        `json:"attempt"`
	Ended        string     `json:"ended,omitempty"`
	Screen       string     `json:"screen,omitempty"`        // last screen of its pane, as text
	FilesChanged []string   `json:"files_changed,omitempty"` // repo-relative
	Artifacts    []string   `json:"artifacts,omitempty"`     // repo-relative artifact paths it wrote
	Errors       []string   `json:"errors,omitempty"`
	Verdict      string     `json:"verdict,omitempty"` // one line
}

// DeadEnd is an approach an earlier attempt tried that failed.
type DeadEnd struct {
	Phase   task.Phase `json:"phase"`
	Attempt int        `json:"attempt"`
	Text    string     `json:"text"`
	At      time.Time  `json:"at"`
}

// Document is the whole handoff. Field order is the file's order.
type Document struct {
	Version      int           `json:"version"`
	ExportedAt   time.Time     `json:"exported_at"`
	Exporter     string        `json:"exporter"` // "orchestra-tui <version>"
	Task         TaskInfo      `json:"task"`
	PhaseReached task.Phase    `json:"phase_reached"`
	Sessions     []SessionInfo `json:"sessions,omitempty"`
	Verdict      *Verdict      `json:"verdict,omitempty"`
	FilesChanged []string      `json:"files_changed,omitempty"` // repo-relative
	Artifacts    []Artifact    `json:"artifacts,omitempty"`
	Decisions    []Decision    `json:"decisions,omitempty"`
	Continuity   *Continuity   `json:"continuity,omitempty"`
	DeadEnds     []DeadEnd     `json:"dead_ends,omitempty"`
	Repo         Identity      `json:"repo"`
	// Digest is the hex sha256 of the canonical encoding of every other
	// field (see Seal). A file edited by hand or damaged fails it.
	Digest string `json:"digest"`
}

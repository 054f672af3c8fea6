package handoff

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/brief"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/sign"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// ImportHolder is the holder recorded on the session rows a resume imports:
// they ran on another machine, under no lease of this store.
const ImportHolder = "handoff"

// Resume creates, in the store of the checkout r, a queued task that
// continues the handed-off one from the phase it reached. In order:
//
//   - the document is checked again (a hand-built one gets the same scrutiny
//     as a parsed file);
//   - the repository must be the same (root commit); a foreign one is a
//     *task.Refusal naming both identities;
//   - a branch head (or base) missing here is fetched from this checkout's
//     origin when it has one; still missing, it is a *MissingCommitError
//     with the fetch to run;
//   - no task here may already work on the branch: one that has not ended
//     is refused by the store's live-branch constraint when the task is
//     imported (so two resumes at once cannot both pass), an ended one by
//     a look first (prune would remove the branch under the new task);
//   - the task branch is created at the handed-off head if missing (an
//     existing branch must contain that head);
//   - the task, the previous machine's sessions (the last one carrying the
//     continuity the first brief here shows), sealed artifacts, decisions
//     and dead ends are imported in one transaction.
//
// Any failure creates nothing. The new task has a new id; its first event
// names the original. A harness or model given here replaces the
// document's; a different harness without a model uses that harness's
// default model rather than a model id meant for another tool.
//
// The new task is signed with key, the fleet key of the engines that will
// run it (package sign): this machine accepts it.
func Resume(ctx context.Context, st store.Store, r *repo.Repo, d Document, harness, model string, now time.Time, key sign.Key) (task.Task, error) {
	if _, err := Marshal(d); err != nil {
		return task.Task{}, err
	}
	local := Identity{}
	if id, err := r.Identity(); err == nil {
		local = Identity{Origin: StripCredentials(id.Origin), RootCommit: id.Root}
	}
	always := func(string) bool { return true }
	if err := Check(d, local, always); err != nil {
		return task.Task{}, err // a foreign repository: nothing is fetched from it
	}
	fetchErr := bringCommits(r, d, local)
	if err := Check(d, local, r.HasCommit); err != nil {
		var mc *MissingCommitError
		if errors.As(err, &mc) && fetchErr != nil {
			return task.Task{}, fmt.Errorf("%w (fetching from origin failed: %v)", err, fetchErr)
		}
		return task.Task{}, err
	}

	t := resumedTask(d, harness, model, now)
	t.Signature = key.Sign(t)
	if err := checkBranchFree(ctx, st, t.Branch); err != nil {
		return task.Task{}, err
	}
	created, err := ensureBranch(r, d.Repo, t.Branch)
	if err != nil {
		return task.Task{}, err
	}
	p := importParams(d, t, now)
	if err := st.TaskImport(ctx, p); err != nil {
		if created {
			_, _ = git(r.Root, "branch", "-D", t.Branch)
		}
		var bt *store.BranchTakenError
		if errors.As(err, &bt) && bt.Holder != "" {
			if holder, gerr := st.TaskGet(ctx, bt.Holder); gerr == nil {
				return task.Task{}, branchWorked(holder, t.Branch, err)
			}
		}
		return task.Task{}, fmt.Errorf("resume task %s: %w", d.Task.ID, err)
	}
	return t, nil
}

// bringCommits fetches the task branch (or everything, when only the base
// is missing) from this checkout's origin remote. It fetches only from a
// remote the operator configured, never from the URL the file names.
func bringCommits(r *repo.Repo, d Document, local Identity) error {
	head := d.Repo.BranchHead
	needHead := head != "" && !r.HasCommit(head)
	needBase := !r.HasCommit(d.Repo.BaseCommit)
	if !needHead && !needBase {
		return nil
	}
	if local.Origin == "" {
		return errors.New("this checkout has no origin remote")
	}
	ref := ""
	if needHead && !needBase && d.Repo.Branch != "" {
		ref = d.Repo.Branch
	}
	return r.Fetch("origin", ref)
}

// resumedTask is the new task: the document's operator fields, a new id,
// queued at the phase reached, on the handed-off branch.
func resumedTask(d Document, harness, model string, now time.Time) task.Task {
	h, m := d.Task.Harness, d.Task.Model
	if harness != "" {
		if harness != h {
			m = ""
		}
		h = harness
	}
	if model != "" {
		m = model
	}
	id := task.NewID(now)
	branch := d.Repo.Branch
	if branch == "" {
		branch = "orchestra/" + strings.ToLower(string(id))
	}
	acceptance := make([]string, len(d.Task.Acceptance))
	for i, a := range d.Task.Acceptance {
		acceptance[i] = task.PlainText(a)
	}
	// The file came from another machine: its text is printed to this
	// operator and typed into this machine's agents, so it is stored
	// without escape sequences or control characters.
	return task.Task{
		ID: id, Title: task.PlainLine(d.Task.Title), Goal: task.PlainText(d.Task.Goal), Acceptance: acceptance,
		Verify: d.Task.Verify, Repo: ".", Pipeline: slices.Clone(d.Task.Pipeline), Harness: h, Model: m,
		Capabilities: slices.Clone(d.Task.Capabilities),
		State:        task.StateQueued, Phase: d.PhaseReached, BaseCommit: d.Repo.BaseCommit, Branch: branch,
		CreatedAt: now, UpdatedAt: now,
	}
}

// checkBranchFree refuses a resume onto the branch of a task here that has
// ended: pruning it would remove the branch under the resumed task, and it
// is what stops a file whose task ended here being resumed again. A task
// that has not ended holds its branch by the store's constraint instead,
// checked in the import's own transaction.
func checkBranchFree(ctx context.Context, st store.Store, branch string) error {
	ts, err := st.TaskList(ctx, store.TaskListParams{States: store.EndedStates})
	if err != nil {
		return fmt.Errorf("resume: list tasks: %w", err)
	}
	for _, t := range ts {
		if t.Branch == branch {
			return branchWorked(t, branch, nil)
		}
	}
	return nil
}

// branchWorked is the refusal of a resume onto the branch task t works on;
// cause, when set, is the store's refusal it explains.
func branchWorked(t task.Task, branch string, cause error) error {
	err := fmt.Errorf("resume: task %s (%s, %s) already works on branch %s in this checkout; "+
		"go on with that task instead (`orchestra-tui retry %s` if it failed or was cancelled), or resume this file in another checkout",
		t.ID, t.Title, t.State, branch, t.ID.Short())
	if cause != nil {
		return fmt.Errorf("%w (%w)", err, store.ErrBranchTaken)
	}
	return err
}

// ensureBranch makes the local task branch exist at the handed-off head. An
// existing branch is kept if it contains the head (work went on here); one
// that does not would silently lose the handed-off work, so it is refused.
func ensureBranch(r *repo.Repo, id Identity, branch string) (created bool, err error) {
	if cur, err := r.BranchHead(branch); err == nil {
		if id.BranchHead != "" && cur != id.BranchHead && !isAncestor(r.Root, id.BranchHead, cur) {
			return false, fmt.Errorf("resume: the local branch %s is at %s, which does not contain the handoff's branch head %s; "+
				"rename or delete the local branch, then resume again", branch, short(cur), short(id.BranchHead))
		}
		return false, nil
	}
	if id.BranchHead == "" {
		return false, nil // no work on a branch yet: the worktree creates it at the base
	}
	if _, err := git(r.Root, "branch", "--no-track", branch, id.BranchHead); err != nil {
		return false, fmt.Errorf("resume: create branch %s at %s: %w", branch, short(id.BranchHead), err)
	}
	return true, nil
}

// importParams builds the records of the resumed task from the document.
func importParams(d Document, t task.Task, now time.Time) store.TaskImportParams {
	p := store.TaskImportParams{Task: t}
	p.Sessions = importSessions(d, t.ID)
	prevSession := ""
	if n := len(p.Sessions); n > 0 {
		prevSession = p.Sessions[n-1].ID
	}
	for _, a := range d.Artifacts {
		p.Artifacts = append(p.Artifacts, store.Artifact{TaskID: t.ID, Phase: a.Phase, Content: []byte(a.Content),
			SHA256: a.SHA256, Session: prevSession, At: d.ExportedAt})
	}
	for _, c := range d.Decisions {
		p.Decisions = append(p.Decisions, store.Decision{ID: c.ID, TaskID: t.ID, Text: task.PlainText(c.Text),
			Author: task.PlainLine(c.Author), At: c.At})
	}
	for _, e := range d.DeadEnds {
		p.DeadEnds = append(p.DeadEnds, store.DeadEnd{TaskID: t.ID, Phase: e.Phase, Attempt: e.Attempt, Text: task.PlainText(e.Text), At: e.At})
	}
	data, _ := json.Marshal(ResumedData{HandoffOf: d.Task.ID, Digest: d.Digest, Exporter: d.Exporter, ExportedAt: d.ExportedAt})
	p.Events = []task.Event{{
		ID: task.NewULID(now), TaskID: t.ID, Kind: task.EvTaskAdded, At: now, Data: data,
		Text: fmt.Sprintf("Task resumed from a handoff of task %s (%s, exported %s): phase %s, branch %s%s; last run on %s.",
			d.Task.ID, d.Exporter, d.ExportedAt.Format(time.RFC3339), t.Phase, t.Branch, headNote(d.Repo), ranOn(previous(d))),
	}}
	return p
}

// ResumedData is the Data of the first event of a resumed task.
type ResumedData struct {
	HandoffOf  task.ID   `json:"handoff_of"` // the task's id on the exporting side
	Digest     string    `json:"digest"`
	Exporter   string    `json:"exporter"`
	ExportedAt time.Time `json:"exported_at"`
}

func headNote(id Identity) string {
	if id.BranchHead == "" {
		return ""
	}
	return " at " + short(id.BranchHead)
}

// importSessions turns the document's sessions into session rows. Each
// carries a continuity record with how it ended, so the first brief here
// lists them under the earlier sessions; the previous session (the one the
// document's continuity belongs to, else the last) carries the full
// continuity, extended to say it was handed off and what stopped it.
func importSessions(d Document, id task.ID) []store.Session {
	prev := previousIndex(d)
	var out []store.Session
	for i, s := range d.Sessions {
		row := store.Session{
			ID: task.NewULID(s.StartedAt), TaskID: id, Phase: s.Phase, Attempt: s.Attempt, Harness: s.Harness,
			Model: s.Model, Holder: ImportHolder, Status: store.SessionExited, StartedAt: s.StartedAt, EndedAt: s.EndedAt,
		}
		switch {
		case i == prev:
			row.Continuity = continuityJSON(handedOff(d, s, row.ID))
		case i < prev || prev < 0:
			row.Continuity = continuityJSON(brief.Continuity{SessionID: row.ID, Harness: s.Harness, Model: s.Model,
				Attempt: s.Attempt, Phase: s.Phase, Ended: s.Ended})
		}
		out = append(out, row)
	}
	if prev == len(d.Sessions) { // a continuity with no session row of its own
		c := d.Continuity
		s := SessionInfo{Phase: c.Phase, Attempt: max(c.Attempt, 1), Harness: c.Harness, Model: c.Model,
			Ended: c.Ended, StartedAt: d.ExportedAt, EndedAt: d.ExportedAt}
		row := store.Session{ID: task.NewULID(d.ExportedAt), TaskID: id, Phase: s.Phase, Attempt: s.Attempt,
			Harness: s.Harness, Model: s.Model, Holder: ImportHolder, Status: store.SessionExited,
			StartedAt: s.StartedAt, EndedAt: s.EndedAt}
		row.Continuity = continuityJSON(handedOff(d, s, row.ID))
		out = append(out, row)
	}
	return out
}

// previousIndex is the index in d.Sessions of the session the continuity
// belongs to: the last one with its phase and attempt, else the last one; it
// is len(d.Sessions) when the continuity matches none, and -1 when there are
// no sessions and no continuity.
func previousIndex(d Document) int {
	if c := d.Continuity; c != nil {
		for i := len(d.Sessions) - 1; i >= 0; i-- {
			s := d.Sessions[i]
			if s.Phase == c.Phase && s.Attempt == c.Attempt {
				return i
			}
		}
		return len(d.Sessions)
	}
	return len(d.Sessions) - 1
}

// previous describes the session that ran last on the exporting machine.
func previous(d Document) SessionInfo {
	if c := d.Continuity; c != nil {
		return SessionInfo{Phase: c.Phase, Attempt: c.Attempt, Harness: c.Harness, Model: c.Model, Ended: c.Ended}
	}
	if n := len(d.Sessions); n > 0 {
		return d.Sessions[n-1]
	}
	return SessionInfo{Phase: d.PhaseReached, Harness: d.Task.Harness, Model: d.Task.Model}
}

// handedOff is the continuity record of the previous machine's last
// session, as the first brief here shows it: the document's continuity with
// an Ended sentence naming the model, the harness and the verdict that
// stopped it, the verdict line and the files the branch changed.
func handedOff(d Document, s SessionInfo, rowID string) brief.Continuity {
	c := brief.Continuity{SessionID: rowID, Harness: s.Harness, Model: s.Model, Attempt: s.Attempt, Phase: s.Phase, Ended: s.Ended}
	if dc := d.Continuity; dc != nil {
		c = brief.Continuity{
			SessionID: dc.SessionID, Harness: dc.Harness, Model: dc.Model, Attempt: dc.Attempt, Phase: dc.Phase,
			Ended: dc.Ended, Screen: dc.Screen, FilesChanged: slices.Clone(dc.FilesChanged),
			Artifacts: slices.Clone(dc.Artifacts), Errors: slices.Clone(dc.Errors), Verdict: dc.Verdict,
		}
		if c.SessionID == "" {
			c.SessionID = rowID
		}
	}
	if d.Verdict != nil && d.Verdict.Line != "" {
		c.Verdict = d.Verdict.Line
	}
	if len(c.FilesChanged) == 0 {
		c.FilesChanged = slices.Clone(d.FilesChanged)
	}
	verdict := c.Verdict
	if verdict == "" {
		verdict = "none recorded"
	}
	ended := strings.TrimSpace(c.Ended)
	if ended == "" {
		ended = "not recorded"
	}
	c.Ended = fmt.Sprintf("Handed off from another machine (%s): the previous session ran phase %s, attempt %d on %s and ended: %s The verdict that stopped it: %s.",
		d.Exporter, c.Phase, c.Attempt, ranOn(SessionInfo{Harness: c.Harness, Model: c.Model}),
		sentenceOf(ended), strings.TrimSuffix(verdict, "."))
	return c
}

// ranOn names a session's harness and model as "harness H with model M".
func ranOn(s SessionInfo) string {
	h := s.Harness
	if h == "" {
		h = "an unnamed harness"
	}
	if s.Model == "" {
		return "harness " + h + " with its default model"
	}
	return "harness " + h + " with model " + s.Model
}

func sentenceOf(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") {
		return s
	}
	return s + "."
}

// continuityJSON is c as a session row stores it, its text (an earlier
// screen, errors, how the session ended) without escape sequences or
// control characters: it came from the other machine's file.
func continuityJSON(c brief.Continuity) string {
	c.Ended, c.Screen, c.Verdict = task.PlainText(c.Ended), task.PlainText(c.Screen), task.PlainText(c.Verdict)
	for i, e := range c.Errors {
		c.Errors[i] = task.PlainText(e)
	}
	b, err := json.Marshal(c)
	if err != nil {
		return ""
	}
	return string(b)
}

package handoff

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/brief"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// WorktreePath is where the coordinator keeps task id's worktree in r.
func WorktreePath(r *repo.Repo, id task.ID) string {
	return filepath.Join(r.Root, filepath.FromSlash(repo.WorktreesDir), string(id))
}

// CommitWorktree commits whatever the task's worktree holds that is not yet
// on its branch, so the branch a handoff names carries all the work done. It
// returns the branch head and whether a commit was made; a task with no
// worktree (never launched, or finished and cleaned up) commits nothing and
// returns an empty sha. Orchestra's own state directory is excluded first,
// so its artifacts and sentinel never become part of the work.
func CommitWorktree(r *repo.Repo, t task.Task) (sha string, committed bool, err error) {
	dir := WorktreePath(r, t.ID)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", false, nil
	}
	if err := r.Exclude(task.StateDir + "/"); err != nil {
		return "", false, fmt.Errorf("commit the work of task %s: %w", t.ID, err)
	}
	msg := fmt.Sprintf("%s (work in progress, handed off)\n\norchestra-tui task %s", t.Title, t.ID)
	sha, committed, err = repo.CommitAll(dir, msg)
	if err != nil {
		return "", false, fmt.Errorf("commit the work of task %s before the handoff: %w", t.ID, err)
	}
	return sha, committed, nil
}

// Export builds the handoff document of task id from the store and the
// repository. It commits the task's uncommitted work to its branch first
// (CommitWorktree), so the branch head it names carries everything the last
// session left; call CommitWorktree yourself beforehand to learn whether it
// did. Paths of this machine are made relative to the worktree or the
// repository root, and the home directory is written as "~". The document
// is sealed and checked: Marshal(doc) will succeed.
func Export(ctx context.Context, st store.Store, r *repo.Repo, id task.ID, exporter string) (Document, error) {
	t, err := st.TaskGet(ctx, id)
	if err != nil {
		return Document{}, fmt.Errorf("export task %s: %w", id, err)
	}
	if _, _, err := CommitWorktree(r, t); err != nil {
		return Document{}, err
	}
	ident, err := r.Identity()
	if err != nil {
		return Document{}, fmt.Errorf("export task %s: read the repository's identity: %w", id, err)
	}
	x := scrubber{roots: []string{WorktreePath(r, id), r.Root}}
	if home, err := os.UserHomeDir(); err == nil {
		x.home = home
	}
	d := Document{
		Version:      Version,
		ExportedAt:   time.Now().UTC(), // the document's own stamp, not a policy clock
		Exporter:     exporter,
		Task:         taskInfo(t, x),
		PhaseReached: phaseReached(t),
		Repo: Identity{
			Origin:     StripCredentials(ident.Origin),
			RootCommit: ident.Root,
			BaseCommit: t.BaseCommit,
			Branch:     t.Branch,
		},
	}
	if t.Branch != "" {
		if head, err := r.BranchHead(t.Branch); err == nil {
			d.Repo.BranchHead = head
		}
	}
	if d.Repo.BranchHead != "" && d.Repo.BranchHead != t.BaseCommit {
		if d.FilesChanged, err = diffNames(r.Root, t.BaseCommit, d.Repo.BranchHead); err != nil {
			return Document{}, fmt.Errorf("export task %s: list the files its branch changed: %w", id, err)
		}
	}
	if err := addHistory(ctx, st, t, &d, x); err != nil {
		return Document{}, fmt.Errorf("export task %s: %w", id, err)
	}
	if err := d.Seal(); err != nil {
		return Document{}, fmt.Errorf("export task %s: %w", id, err)
	}
	if _, err := Marshal(d); err != nil {
		return Document{}, fmt.Errorf("export task %s: %w", id, err)
	}
	return d, nil
}

// phaseReached is the phase a resumed task starts from: the task's current
// one (a finished task's is its last phase).
func phaseReached(t task.Task) task.Phase {
	if t.Phase == "" || !t.Pipeline.Has(t.Phase) {
		return t.Pipeline.First()
	}
	return t.Phase
}

func taskInfo(t task.Task, x scrubber) TaskInfo {
	info := TaskInfo{
		ID: t.ID, Title: x.text(t.Title), Goal: x.text(t.Goal), Verify: x.text(t.Verify),
		Pipeline: slices.Clone(t.Pipeline), Harness: t.Harness, Model: t.Model,
		Capabilities: slices.Clone(t.Capabilities),
	}
	for _, a := range t.Acceptance {
		info.Acceptance = append(info.Acceptance, x.text(a))
	}
	return info
}

// addHistory fills the parts of d that come from the task's records:
// sessions, the latest verdict, sealed artifacts, decisions, continuity and
// dead ends.
func addHistory(ctx context.Context, st store.Store, t task.Task, d *Document, x scrubber) error {
	sessions, err := st.SessionList(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("read sessions: %w", err)
	}
	spent, err := sessionUsage(ctx, st, t.ID)
	if err != nil {
		return err
	}
	for _, s := range sessions {
		info := SessionInfo{Phase: s.Phase, Attempt: s.Attempt, Harness: s.Harness, Model: s.Model,
			Ended: string(s.Status), StartedAt: s.StartedAt, EndedAt: s.EndedAt, Usage: spent[s.ID]}
		if c, ok := parseContinuity(s.Continuity); ok && c.Ended != "" {
			info.Ended = x.text(c.Ended)
		}
		d.Sessions = append(d.Sessions, info)
	}
	for i := len(sessions) - 1; i >= 0; i-- {
		if c, ok := parseContinuity(sessions[i].Continuity); ok {
			d.Continuity = continuityOf(c, sessions[i], x)
			break
		}
	}

	verdicts, err := st.VerdictList(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("read verdicts: %w", err)
	}
	if n := len(verdicts); n > 0 {
		v := verdicts[n-1].Verdict
		d.Verdict = &Verdict{Status: v.Status, Line: v.Line(), Passed: v.Passed, Failed: v.Failed,
			Skipped: v.Skipped, Counted: v.Counted}
	}

	arts, err := st.ArtifactList(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("read artifacts: %w", err)
	}
	latest := map[task.Phase][]byte{}
	for _, a := range arts {
		latest[a.Phase] = a.Content // sealing order: the last one wins
	}
	for _, p := range t.Pipeline {
		if c, ok := latest[p]; ok {
			d.Artifacts = append(d.Artifacts, NewArtifact(p, []byte(x.text(string(c)))))
		}
	}

	decisions, err := st.DecisionList(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("read decisions: %w", err)
	}
	for _, c := range decisions {
		d.Decisions = append(d.Decisions, Decision{ID: c.ID, Text: x.text(c.Text), Author: c.Author, At: c.At})
	}

	deadEnds, err := st.DeadEndList(ctx, t.ID)
	if err != nil {
		return fmt.Errorf("read dead ends: %w", err)
	}
	for _, e := range deadEnds {
		d.DeadEnds = append(d.DeadEnds, DeadEnd{Phase: e.Phase, Attempt: e.Attempt, Text: x.text(e.Text), At: e.At})
	}
	return nil
}

// sessionUsage reads the usage of each of the task's sessions from its
// session.usage events.
func sessionUsage(ctx context.Context, st store.Store, id task.ID) (map[string]*SessionUsage, error) {
	evs, err := st.EventList(ctx, store.EventListParams{TaskID: id})
	if err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	out := map[string]*SessionUsage{}
	for _, e := range evs {
		if e.Kind != task.EvUsage || len(e.Data) == 0 {
			continue
		}
		var d store.UsageData
		if json.Unmarshal(e.Data, &d) != nil {
			continue
		}
		tk, cost := d.Totals.Sum()
		out[d.SessionID] = &SessionUsage{Tokens: tk, CostUSD: cost, LowerBound: d.LowerBound}
	}
	return out, nil
}

func parseContinuity(s string) (brief.Continuity, bool) {
	if s == "" {
		return brief.Continuity{}, false
	}
	var c brief.Continuity
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return brief.Continuity{}, false
	}
	return c, true
}

// continuityOf converts a stored continuity record, filling what it left out
// from its session row.
func continuityOf(c brief.Continuity, s store.Session, x scrubber) *Continuity {
	out := &Continuity{
		Harness: c.Harness, Model: c.Model, SessionID: c.SessionID, Phase: c.Phase, Attempt: c.Attempt,
		Ended: x.text(c.Ended), Screen: x.text(c.Screen), Verdict: x.text(c.Verdict),
		FilesChanged: x.paths(c.FilesChanged), Artifacts: x.paths(c.Artifacts),
	}
	for _, e := range c.Errors {
		out.Errors = append(out.Errors, x.text(e))
	}
	if out.Harness == "" {
		out.Harness = s.Harness
	}
	if out.Model == "" {
		out.Model = s.Model
	}
	if out.SessionID == "" {
		out.SessionID = s.ID
	}
	if out.Phase == "" {
		out.Phase = s.Phase
	}
	if out.Attempt == 0 {
		out.Attempt = s.Attempt
	}
	return out
}

// scrubber removes this machine's paths from what a handoff carries.
type scrubber struct {
	roots []string // most specific first: the worktree, then the repository root
	home  string
}

func (x scrubber) text(s string) string {
	for _, r := range x.roots {
		s = RelativizeText(r, s)
	}
	if h := strings.TrimRight(x.home, `/\`); h != "" {
		s = strings.ReplaceAll(s, h+string(filepath.Separator), "~"+string(filepath.Separator))
	}
	return s
}

func (x scrubber) paths(ps []string) []string {
	for _, r := range x.roots {
		ps = Relativize(r, ps)
	}
	return ps
}

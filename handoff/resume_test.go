package handoff_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/brief"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/handoff"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// machines is two checkouts of one repository and a bare origin between
// them, each with its own store: A has a half-done task, B has nothing yet.
type machines struct {
	ctx    context.Context
	now    time.Time
	origin string
	a, b   string
	ra, rb *repo.Repo
	sa, sb *sqlite.Store
	task   task.Task
	seeded store.TaskImportParams
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "git %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st
}

// setup builds machine A with the calc project pushed to origin, a task in
// phase implement whose worktree holds an uncommitted half fix, and a
// history with every kind of record; and machine B, a clone of origin made
// before A's branch existed, so resuming there has to fetch it.
func setup(t *testing.T) *machines {
	t.Helper()
	m := &machines{ctx: t.Context(), now: time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)}
	m.origin = filepath.Join(t.TempDir(), "origin.git")
	git(t, t.TempDir(), "init", "-q", "--bare", "-b", "main", m.origin)
	m.a = t.TempDir()
	require.NoError(t, project.WriteProject(m.a))
	git(t, m.a, "remote", "add", "origin", m.origin)
	git(t, m.a, "push", "-q", "origin", "main")
	m.b = filepath.Join(t.TempDir(), "b")
	git(t, filepath.Dir(m.b), "clone", "-q", m.origin, m.b)

	var err error
	m.ra, err = repo.Open(m.a)
	require.NoError(t, err)
	m.rb, err = repo.Open(m.b)
	require.NoError(t, err)
	m.sa, m.sb = openStore(t), openStore(t)

	base, err := m.ra.Head()
	require.NoError(t, err)
	id := task.NewID(m.now)
	m.task = task.Task{
		ID: id, Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: project.VerifyCommand,
		Repo: ".", Pipeline: task.Pipeline{task.PhasePlan, task.PhaseImplement, task.PhaseReview},
		Harness: "scripted", Model: "model-a", Capabilities: []string{"go"},
		State: task.StateFailed, Phase: task.PhaseImplement, Attempt: 1, BaseCommit: base,
		Branch: "orchestra/" + strings.ToLower(string(id)), Reason: "attempts exhausted",
		CreatedAt: m.now, UpdatedAt: m.now,
	}
	wt, err := m.ra.WorktreeAdd(string(id), m.task.Branch, base)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(wt, "calc.go"), []byte(project.CalcHalf), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(wt, task.StateDir), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(wt, task.ArtifactPath(task.PhaseImplement)), []byte(task.Example(task.PhaseImplement)), 0o644))

	cont := brief.Continuity{
		SessionID: "01SESSIONA0000000000000002", Harness: "scripted", Model: "model-a", Attempt: 1,
		Phase: task.PhaseImplement, Ended: "Phase implement finished; its artifact was sealed.",
		Screen:       "● Update(" + filepath.Join(wt, "calc.go") + ")\n--- FAIL: TestMul",
		FilesChanged: []string{"calc.go"}, Artifacts: []string{task.ArtifactPath(task.PhaseImplement)},
		Errors: []string{"the verify gate failed in " + wt}, Verdict: "✗ incomplete · tests failing (2 passed, 1 failed)",
	}
	contJSON, err := json.Marshal(cont)
	require.NoError(t, err)
	planCont, err := json.Marshal(brief.Continuity{Harness: "scripted", Model: "model-a", Attempt: 1, Phase: task.PhasePlan,
		Ended: "Phase plan finished; its artifact was sealed."})
	require.NoError(t, err)
	plan := []byte(task.Example(task.PhasePlan))
	m.seeded = store.TaskImportParams{
		Task: m.task,
		Sessions: []store.Session{
			{ID: "01SESSIONA0000000000000001", TaskID: id, Phase: task.PhasePlan, Attempt: 1, Harness: "scripted", Model: "model-a",
				Token: 1, Holder: "console:1", Status: store.SessionExited, Continuity: string(planCont),
				StartedAt: m.now.Add(-10 * time.Minute), EndedAt: m.now.Add(-9 * time.Minute)},
			{ID: cont.SessionID, TaskID: id, Phase: task.PhaseImplement, Attempt: 1, Harness: "scripted", Model: "model-a",
				Token: 2, Holder: "console:1", Status: store.SessionExited, Continuity: string(contJSON),
				StartedAt: m.now.Add(-8 * time.Minute), EndedAt: m.now.Add(-7 * time.Minute)},
		},
		Artifacts: []store.Artifact{
			{TaskID: id, Phase: task.PhasePlan, Content: []byte(`{"summary":"old"`), At: m.now.Add(-9 * time.Minute)},
			{TaskID: id, Phase: task.PhasePlan, Content: plan, At: m.now.Add(-9 * time.Minute)},
			{TaskID: id, Phase: task.PhaseImplement, Content: []byte(task.Example(task.PhaseImplement)), At: m.now.Add(-7 * time.Minute)},
		},
		Decisions: []store.Decision{{ID: "01DECISION0000000000000001", TaskID: id, Text: "Keep the public API.", Author: "ana", At: m.now.Add(-8 * time.Minute)}},
		DeadEnds:  []store.DeadEnd{{TaskID: id, Phase: task.PhaseImplement, Attempt: 1, Text: "Attempt 1 of implement left the tests failing.", At: m.now.Add(-7 * time.Minute)}},
	}
	require.NoError(t, m.sa.TaskImport(m.ctx, m.seeded))
	require.NoError(t, m.sa.VerdictInsert(m.ctx, store.VerdictRecord{TaskID: id, Phase: task.PhaseImplement, Verdict: verify.Verdict{
		Status: verify.StatusIncomplete, Passed: 2, Failed: 1, Counted: true, Tail: "FAIL " + wt, At: m.now.Add(-7 * time.Minute)}}))
	return m
}

// export exports A's task and pushes its branch to origin, as an operator
// handing the task over would.
func (m *machines) export(t *testing.T) handoff.Document {
	t.Helper()
	d, err := handoff.Export(m.ctx, m.sa, m.ra, m.task.ID, "orchestra-tui test")
	require.NoError(t, err)
	git(t, m.a, "push", "-q", "origin", m.task.Branch)
	return d
}

// storeEmpty asserts B's store holds no task and the branch was not made.
func (m *machines) requireNothingCreated(t *testing.T) {
	t.Helper()
	ts, err := m.sb.TaskList(m.ctx, store.TaskListParams{})
	require.NoError(t, err)
	require.Empty(t, ts)
	evs, err := m.sb.EventList(m.ctx, store.EventListParams{})
	require.NoError(t, err)
	require.Empty(t, evs)
	_, err = m.rb.BranchHead(m.task.Branch)
	require.Error(t, err, "the task branch must not be created")
}

func TestExportCarriesTheWorkAndNoPathsOfThisMachine(t *testing.T) {
	t.Parallel()
	m := setup(t)
	d := m.export(t)

	data, err := handoff.Marshal(d)
	require.NoError(t, err)
	require.NotContains(t, string(data), m.a, "an absolute path of the exporting machine")
	require.Equal(t, []string{"calc.go"}, d.FilesChanged, "the .orchestra state must not be committed")
	require.Equal(t, project.CalcHalf, git(t, m.a, "show", d.Repo.BranchHead+":calc.go")+"\n")
	require.Empty(t, git(t, handoff.WorktreePath(m.ra, m.task.ID), "status", "--porcelain"))
	require.Equal(t, m.origin, d.Repo.Origin)
	require.Equal(t, task.PhaseImplement, d.PhaseReached)
	require.Len(t, d.Sessions, 2)
	require.Equal(t, "model-a", d.Sessions[1].Model)
	require.Equal(t, &handoff.Verdict{Status: verify.StatusIncomplete, Line: "✗ incomplete · tests failing (2 passed, 1 failed)",
		Passed: 2, Failed: 1, Counted: true}, d.Verdict)
	require.Len(t, d.Artifacts, 2, "one per phase, the latest")
	require.Equal(t, task.Example(task.PhasePlan), d.Artifacts[0].Content)
	require.Equal(t, "● Update(calc.go)\n--- FAIL: TestMul", d.Continuity.Screen)
	require.Equal(t, []string{"the verify gate failed in .orchestra/worktrees/" + string(m.task.ID)}, d.Continuity.Errors)
}

func TestResumeRoundTripsEveryField(t *testing.T) {
	t.Parallel()
	m := setup(t)
	d := m.export(t)
	data, err := handoff.Marshal(d)
	require.NoError(t, err)
	parsed, err := handoff.Parse(data)
	require.NoError(t, err)

	at := m.now.Add(time.Hour)
	got, err := handoff.Resume(m.ctx, m.sb, m.rb, parsed, "", "model-b", at, testKey)
	require.NoError(t, err)
	require.NotEqual(t, m.task.ID, got.ID, "a resumed task gets an id of its own")
	require.Equal(t, task.StateQueued, got.State)
	require.Equal(t, task.PhaseImplement, got.Phase)
	require.Equal(t, "scripted", got.Harness)
	require.Equal(t, "model-b", got.Model)
	stored, err := m.sb.TaskGet(m.ctx, got.ID)
	require.NoError(t, err)
	require.Equal(t, got, stored)
	head, err := m.rb.BranchHead(m.task.Branch)
	require.NoError(t, err, "the branch was fetched from origin and created")
	require.Equal(t, d.Repo.BranchHead, head)

	// The worktree the coordinator will make checks the branch out as it is.
	wt, err := m.rb.WorktreeAdd(string(got.ID), got.Branch, got.BaseCommit)
	require.NoError(t, err)
	calc, err := os.ReadFile(filepath.Join(wt, "calc.go"))
	require.NoError(t, err)
	require.Equal(t, project.CalcHalf, string(calc))

	evs, err := m.sb.EventList(m.ctx, store.EventListParams{TaskID: got.ID})
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Contains(t, evs[0].Text, string(m.task.ID))

	// The previous session's continuity names model A, its harness, the
	// changed file and the verdict that stopped it.
	sessions, err := m.sb.SessionList(m.ctx, got.ID)
	require.NoError(t, err)
	require.Len(t, sessions, 2)
	var last brief.Continuity
	require.NoError(t, json.Unmarshal([]byte(sessions[1].Continuity), &last))
	require.Contains(t, last.Ended, "harness scripted with model model-a")
	require.Contains(t, last.Ended, d.Verdict.Line)
	require.Contains(t, last.Ended, d.Continuity.Ended)
	require.Equal(t, d.Verdict.Line, last.Verdict)
	require.Equal(t, []string{"calc.go"}, last.FilesChanged)

	// Export again on B (from the branch alone: no worktree there yet but
	// the one above, which is clean): every field comes back, except what a
	// resume changes on purpose.
	require.NoError(t, m.rb.WorktreeRemove(wt))
	again, err := handoff.Export(m.ctx, m.sb, m.rb, got.ID, "orchestra-tui test B")
	require.NoError(t, err)
	want := parsed
	want.Task.ID, want.Task.Model = got.ID, "model-b"
	want.ExportedAt, want.Exporter, want.Digest = again.ExportedAt, again.Exporter, again.Digest
	// The handoff note is added to the previous session's ending, and the
	// verdict that stopped it becomes its verdict line.
	cont := *want.Continuity
	cont.Ended, cont.Verdict = last.Ended, last.Verdict
	want.Continuity = &cont
	want.Sessions = append([]handoff.SessionInfo(nil), want.Sessions...)
	want.Sessions[1].Ended = last.Ended
	// The verdict is not imported as B's own: B's console re-runs the
	// tests itself; A's verdict travels in the continuity above.
	want.Verdict = nil
	require.Equal(t, want, again)
}

func TestResumeRefusesAForeignRepository(t *testing.T) {
	t.Parallel()
	m := setup(t)
	d := m.export(t)
	foreign := t.TempDir()
	git(t, foreign, "init", "-q", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(foreign, "x"), []byte("x"), 0o644))
	git(t, foreign, "add", "-A")
	git(t, foreign, "commit", "-q", "-m", "another project")
	rf, err := repo.Open(foreign)
	require.NoError(t, err)
	st := openStore(t)

	_, err = handoff.Resume(m.ctx, st, rf, d, "", "", m.now, testKey)
	var r *task.Refusal
	require.True(t, errors.As(err, &r), "%v", err)
	require.Equal(t, task.ReasonHandoffForeignRepo, r.Reason)
	require.Contains(t, err.Error(), d.Repo.RootCommit)
	require.Contains(t, err.Error(), git(t, foreign, "rev-parse", "HEAD"))
	ts, err := st.TaskList(m.ctx, store.TaskListParams{})
	require.NoError(t, err)
	require.Empty(t, ts)
}

func TestResumeExplainsAMissingBaseCommit(t *testing.T) {
	t.Parallel()
	m := setup(t)
	// A commit on A's main that was never pushed becomes the base.
	git(t, m.a, "commit", "-q", "--allow-empty", "-m", "local only")
	d := m.export(t)
	d.Repo.BaseCommit = git(t, m.a, "rev-parse", "HEAD")
	d.Repo.BranchHead = ""
	require.NoError(t, d.Seal())

	_, err := handoff.Resume(m.ctx, m.sb, m.rb, d, "", "", m.now, testKey)
	var mc *handoff.MissingCommitError
	require.True(t, errors.As(err, &mc), "%v", err)
	require.Equal(t, "base commit", mc.What)
	require.Equal(t, "git fetch "+m.origin+" "+m.task.Branch, mc.Fetch)
	require.Contains(t, err.Error(), "git fetch")
	m.requireNothingCreated(t)
}

func TestResumeOfAnInvalidDocumentCreatesNothing(t *testing.T) {
	t.Parallel()
	m := setup(t)
	d := m.export(t)
	data, err := handoff.Marshal(d)
	require.NoError(t, err)

	edited := strings.Replace(string(data), `"model-a"`, `"model-x"`, 1)
	for name, file := range map[string][]byte{
		"truncated":   data[:len(data)/2],
		"hand-edited": []byte(edited),
		"newer":       []byte(strings.Replace(string(data), `"version": 1`, `"version": 2`, 1)),
		"malformed":   []byte("{"),
	} {
		_, err := handoff.Parse(file)
		var fe *handoff.FieldError
		require.True(t, errors.As(err, &fe), "%s: %v", name, err)
	}
	bad := d
	bad.Task.Verify = ""
	_, err = handoff.Resume(m.ctx, m.sb, m.rb, bad, "", "", m.now, testKey)
	var fe *handoff.FieldError
	require.True(t, errors.As(err, &fe), "%v", err)
	require.Equal(t, "task.verify", fe.Field)
	m.requireNothingCreated(t)
}

func TestResumeTwiceIsRefused(t *testing.T) {
	t.Parallel()
	m := setup(t)
	d := m.export(t)
	_, err := handoff.Resume(m.ctx, m.sb, m.rb, d, "", "", m.now, testKey)
	require.NoError(t, err)
	_, err = handoff.Resume(m.ctx, m.sb, m.rb, d, "", "", m.now, testKey)
	require.ErrorContains(t, err, "already works on branch "+m.task.Branch)
	ts, err := m.sb.TaskList(m.ctx, store.TaskListParams{})
	require.NoError(t, err)
	require.Len(t, ts, 1)
}

package coord

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/diff"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A task that changed two files shows both in its branch's diff, with
// their counts, and a change made on main after the branch parted is not
// in it; the session scope shows what the one session committed.
func TestDiffOfATaskThatChangedTwoFiles(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{
			{Path: "calc.go", Content: project.CalcFixed},
			{Path: "NOTES.md", Content: "# Notes\n\nAdd and Mul fixed.\n"},
		}}},
	}}, nil)
	id := greenTask(t, b)
	// main moves on after the branch parted: not the task's change.
	require.NoError(t, os.WriteFile(filepath.Join(b.root, "later.txt"), []byte("later\n"), 0o644))
	gitOut(t, b.root, "add", "later.txt")
	gitOut(t, b.root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "later on main")

	ctx := context.Background()
	res, err := b.c.Diff(ctx, id, DiffQuery{})
	require.NoError(t, err)
	require.Equal(t, diff.ScopeBranch, res.Scope)
	paths := map[string]diff.File{}
	for _, f := range res.Files {
		paths[f.Path] = f
	}
	require.Len(t, res.Files, 2, "%+v", res.Files)
	require.Contains(t, paths, "calc.go")
	require.Equal(t, "added", paths["NOTES.md"].Status)
	require.Equal(t, 3, paths["NOTES.md"].Added)
	require.Positive(t, paths["calc.go"].Added)
	require.Positive(t, paths["calc.go"].Removed)
	require.NotEmpty(t, paths["calc.go"].Hunks)
	require.Contains(t, res.Base, "main @ ")

	sres, err := b.c.Diff(ctx, id, DiffQuery{Scope: diff.ScopeSession})
	require.NoError(t, err)
	require.Equal(t, diff.ScopeSession, sres.Scope)
	require.NotEmpty(t, sres.Session)
	require.Len(t, sres.Files, 2, "the only session made the whole change: %+v", sres)
}

// A task whose branch prune removed says so on its Diff tab, rather than
// that the branch was never pushed.
func TestDiffOfAPrunedTaskSaysSo(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, nil)
	id := greenTask(t, b)
	ctx := context.Background()
	tk, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	gitOut(t, b.root, "worktree", "remove", "--force", filepath.Join(b.root, ".orchestra", "worktrees", string(id)))
	gitOut(t, b.root, "branch", "-D", tk.Branch)
	res, err := b.c.Diff(ctx, id, DiffQuery{})
	require.NoError(t, err)
	require.Contains(t, res.Note, "is not in this clone yet", "a branch gone without prune")

	// As prune records it (cmd/orchestra-tui/finish.go).
	now := time.Now()
	require.NoError(t, b.st.EventAppend(ctx, task.Event{ID: task.NewULID(now), TaskID: id, Kind: task.EvBranchPruned, At: now,
		Text: "Pruned: worktree and branch removed."}))
	res, err = b.c.Diff(ctx, id, DiffQuery{})
	require.NoError(t, err)
	require.Equal(t, "branch "+tk.Branch+" was removed by prune (its work was merged, or dropped by `prune --all`)", res.Note)
	require.Empty(t, res.Files)
}

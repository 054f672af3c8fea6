package coord

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/handoff"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// setupClone is setup on a clone of another bundle's repository: machine B
// of a handoff, with its own store and agent script.
func setupClone(t testing.TB, from string, sc agent.Script) *bundle {
	t.Helper()
	root := filepath.Join(t.TempDir(), "b")
	require.NoError(t, project.Git(filepath.Dir(root), "clone", "-q", from, root))
	return setupIn(t, root, sc, nil, nil, nil)
}

// exportHalfDone runs the calc task on machine A until its implement
// session has left half a fix and stalled, stops the console and writes the
// task's handoff file.
func exportHalfDone(t *testing.T) (a *bundle, file string) {
	t.Helper()
	a = setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall, Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcHalf}}}},
	}}, nil)
	id := a.addPipeline(t, task.Pipeline{task.PhaseImplement})
	a.waitEvent(t, 60*time.Second, kindIs(task.EvSessionConfirmed))
	a.waitPane(t, id, "calc.go", 30*time.Second)
	a.stop()
	ctx := context.Background()
	d, err := handoff.Export(ctx, a.st, a.repo, id, "orchestra-tui test")
	require.NoError(t, err)
	require.Contains(t, d.FilesChanged, "calc.go")
	data, err := handoff.Marshal(d)
	require.NoError(t, err)
	file = filepath.Join(t.TempDir(), "handoff.json")
	require.NoError(t, os.WriteFile(file, data, 0o644))
	return a, file
}

func TestResumeFromTheConsoleRunsTheHandedOffTask(t *testing.T) {
	t.Parallel()
	a, file := exportHalfDone(t)
	b := setupClone(t, a.root, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}})

	res, err := b.c.Do(context.Background(), Command{Kind: CmdResume, Path: file, Harness: "scripted"})
	require.NoError(t, err)
	require.NotEmpty(t, res.TaskID)
	require.Equal(t, "resumed task "+res.TaskID.Short()+" from handoff.json at phase implement (harness scripted, its default model)", res.Message)
	// The task is the loop's at once, not on its next start.
	tv := b.taskView(t, res.TaskID)
	require.Equal(t, task.PhaseImplement, tv.Task.Phase)

	b.waitEvent(t, 10*time.Second, func(e task.Event) bool { return e.TaskID == res.TaskID && e.Kind == task.EvTaskAdded })
	last := b.waitEvent(t, 90*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	require.Equal(t, res.TaskID, last.TaskID)
	br := b.recordedBrief(task.PhaseImplement, 1, 1)
	require.Contains(t, br, "Handed off from another machine", "the first brief here carries the continuity")
	require.Contains(t, br, "calc.go")
}

func TestResumeFromTheConsoleRefusesAndCreatesNothing(t *testing.T) {
	t.Parallel()
	a, file := exportHalfDone(t)
	b := setupClone(t, a.root, agent.Script{})
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	edited := filepath.Join(t.TempDir(), "edited.json")
	require.NoError(t, os.WriteFile(edited, []byte(strings.Replace(string(data), `"Fix calc"`, `"Fix calc later"`, 1)), 0o644))
	truncated := filepath.Join(t.TempDir(), "truncated.json")
	require.NoError(t, os.WriteFile(truncated, data[:len(data)/2], 0o644))

	for _, tc := range []struct {
		name string
		cmd  Command
		want []string
	}{
		{"no path", Command{Kind: CmdResume}, []string{"path: no handoff file given"}},
		{"missing file", Command{Kind: CmdResume, Path: filepath.Join(t.TempDir(), "nope.json")}, []string{"path:", "no such file"}},
		{"hand-edited", Command{Kind: CmdResume, Path: edited}, []string{"nothing was created", "digest"}},
		{"truncated", Command{Kind: CmdResume, Path: truncated}, []string{"nothing was created", "(file)"}},
		{"unknown harness", Command{Kind: CmdResume, Path: file, Harness: "nosuch"}, []string{"nothing was created", `harness: no harness named "nosuch"`, "scripted"}},
	} {
		_, err := b.c.Do(context.Background(), tc.cmd)
		require.Error(t, err, tc.name)
		for _, w := range tc.want {
			require.Contains(t, err.Error(), w, tc.name)
		}
	}
	ts, err := b.st.TaskList(context.Background(), store.TaskListParams{})
	require.NoError(t, err)
	require.Empty(t, ts)
	require.Empty(t, b.c.Snapshot().Tasks)
}

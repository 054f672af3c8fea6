package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/handoff"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// exported makes a calc repository with one task in its store (on a
// harness no slot of the committed orchestra.toml runs, so a resumed run in
// a clone comes to rest at once) and exports it through the CLI.
func exported(t *testing.T) (root string, id task.ID, file string) {
	t.Helper()
	root = t.TempDir()
	require.NoError(t, project.WriteProject(root))
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"),
		[]byte("[[slots]]\nname = \"only\"\nharness = \"scripted\"\ncapacity = 1\n"), 0o600))
	require.NoError(t, project.Git(root, "add", "orchestra.toml"))
	require.NoError(t, project.Git(root, "commit", "-q", "-m", "slots"))
	r, err := repo.Open(root)
	require.NoError(t, err)
	head, err := r.Head()
	require.NoError(t, err)
	now := time.Now()
	id = task.NewID(now)
	tk := task.Task{ID: id, Title: "Fix calc", Goal: project.Goal, Verify: project.VerifyCommand, Repo: ".",
		Pipeline: task.Pipeline{task.PhaseImplement}, Harness: "shell", Model: "model-a",
		State: task.StateQueued, Phase: task.PhaseImplement, BaseCommit: head,
		Branch: "orchestra/" + strings.ToLower(string(id)), CreatedAt: now, UpdatedAt: now}
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	require.NoError(t, st.TaskInsert(context.Background(), tk))
	require.NoError(t, st.Close())

	file = filepath.Join(t.TempDir(), "handoff.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"handoff", "export", string(id)[len(id)-6:], "--out", file, "-C", root}, nil, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stdout.String(), "Wrote the handoff of task "+string(id))
	require.Contains(t, stdout.String(), file)
	return root, id, file
}

func tasksIn(t *testing.T, root string) []task.Task {
	t.Helper()
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	defer st.Close()
	ts, err := st.TaskList(context.Background(), store.TaskListParams{})
	require.NoError(t, err)
	return ts
}

func TestHandoffExportThenResume(t *testing.T) {
	t.Parallel()
	a, id, file := exported(t)
	b := filepath.Join(t.TempDir(), "b")
	require.NoError(t, project.Git(filepath.Dir(b), "clone", "-q", a, b))

	// resumeInto, not `run --resume`: what runs after the resume is the
	// headless run's business, tested with it.
	o, err := coord.Open(coord.OpenParams{Dir: b})
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	code := resumeInto(o, file, "", "model-b", &stdout, &stderr)
	require.NoError(t, o.Close())
	require.Equal(t, 0, code, stderr.String())
	require.Contains(t, stdout.String(), "Resumed task "+string(id)+" as ")
	ts := tasksIn(t, b)
	require.Len(t, ts, 1)
	require.Equal(t, "model-b", ts[0].Model)
}

func TestResumeOfAnInvalidFileCreatesNothing(t *testing.T) {
	t.Parallel()
	a, _, file := exported(t)
	data, err := os.ReadFile(file)
	require.NoError(t, err)
	edited := filepath.Join(t.TempDir(), "edited.json")
	require.NoError(t, os.WriteFile(edited, []byte(strings.Replace(string(data), "Fix calc", "Fix calc!", 1)), 0o644))
	truncated := filepath.Join(t.TempDir(), "truncated.json")
	require.NoError(t, os.WriteFile(truncated, data[:len(data)/3], 0o644))
	newer := filepath.Join(t.TempDir(), "newer.json")
	require.NoError(t, os.WriteFile(newer, []byte(strings.Replace(string(data), `"version": 1`, `"version": 2`, 1)), 0o644))

	b := filepath.Join(t.TempDir(), "b")
	require.NoError(t, project.Git(filepath.Dir(b), "clone", "-q", a, b))
	for _, f := range []string{edited, truncated, newer} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"run", "-C", b, "--resume", f, "--headless"}, nil, &stdout, &stderr)
		require.Equal(t, 1, code, f)
		require.Contains(t, stderr.String(), "nothing was created", f)
		require.Empty(t, tasksIn(t, b), f)
	}

	var stdout, stderr bytes.Buffer
	code := run([]string{"run", "-C", b, "--resume", file, "--harness", "nosuch", "--headless"}, nil, &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), `no harness named "nosuch"`)
	require.Empty(t, tasksIn(t, b))
}

func TestHandoffExportUnknownTask(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	var stdout, stderr bytes.Buffer
	code := run([]string{"handoff", "export", "NOPE", "-C", root, "--out", filepath.Join(t.TempDir(), "h.json")}, nil, &stdout, &stderr)
	require.Equal(t, 1, code)
	require.Contains(t, stderr.String(), "no store in this repository", "a repository with no store has no task to export")
}

// `run --resume` on a device or a FIFO is refused at once: /dev/zero
// reports a size of 0 and never ends, and a FIFO with no writer would block
// the open for ever.
func TestResumeOfADeviceOrFIFOIsRefusedAtOnce(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, project.WriteProject(root))
	fifo := filepath.Join(t.TempDir(), "handoff.json")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	for _, f := range []string{"/dev/zero", fifo} {
		var stdout, stderr bytes.Buffer
		code := run([]string{"run", "-C", root, "--resume", f, "--headless"}, nil, &stdout, &stderr)
		require.Equal(t, 1, code, f)
		require.Contains(t, stderr.String(), "not a regular file", f)
		require.Empty(t, tasksIn(t, root), f)
	}
}

// `run --resume` imports through the coordinator's own resume code, as a
// running engine's resume command does: a handoff whose harness is not
// configured here is refused with the engine's sentence, and nothing is
// created; naming one that is resumes it on that harness.
func TestRunResumeRefusesAnUnknownHarnessAsTheEngineDoes(t *testing.T) {
	t.Parallel()
	a, _, file := exported(t)
	f := rewritten(t, file, func(d *handoff.Document) { d.Task.Harness = "nowhere" })
	b := filepath.Join(t.TempDir(), "b")
	require.NoError(t, project.Git(filepath.Dir(b), "clone", "-q", a, b))

	code, _, stderr := cli(t, "run", "-C", b, "--resume", f, "--headless")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `nothing was created: task.harness: no harness named "nowhere" is configured`)
	require.Contains(t, stderr, "name a harness to resume on")
	require.Empty(t, tasksIn(t, b))

	o, err := coord.Open(coord.OpenParams{Dir: b})
	require.NoError(t, err)
	var stdout, errb bytes.Buffer
	code = resumeInto(o, f, "shell", "", &stdout, &errb)
	require.NoError(t, o.Close())
	require.Equal(t, 0, code, errb.String())
	ts := tasksIn(t, b)
	require.Len(t, ts, 1)
	require.Equal(t, "shell", ts[0].Harness)
}

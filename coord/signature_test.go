package coord

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A task row whose verify command was changed in the store (a plain UPDATE,
// as another machine with the store's password could) is refused by every
// engine that opens the store, with a refusal that names the bad
// signature: no agent is launched and the command never runs. A task the
// engine signed itself runs as before.
func TestEditedTaskIsRefusedByEveryEngine(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, nil)
	b.stop()

	ctx := context.Background()
	tk, err := Prepare(task.Task{Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance,
		Verify: project.VerifyCommand, Harness: "scripted", Pipeline: task.Pipeline{task.PhaseImplement}}, b.repo, time.Now())
	require.NoError(t, err)
	require.NoError(t, b.st.TaskInsert(ctx, signedTask(t, tk)))

	pwned := filepath.Join(t.TempDir(), "pwned")
	db, err := sql.Open("sqlite", b.storeAt)
	require.NoError(t, err)
	defer db.Close()
	res, err := db.ExecContext(ctx, `UPDATE tasks SET verify = ? WHERE id = ?`, "touch "+pwned, string(tk.ID))
	require.NoError(t, err)
	n, err := res.RowsAffected()
	require.NoError(t, err)
	require.EqualValues(t, 1, n)

	for range 2 { // two engines, one after the other: each refuses it
		b.start(t)
		ref := b.waitEvent(t, 30*time.Second, func(e task.Event) bool {
			return e.TaskID == tk.ID && e.Kind == task.EvRefusal && e.Reason == task.ReasonBadSignature
		})
		require.Contains(t, ref.Text, "signature does not match its goal, verify command, harness and pipeline")
		require.Contains(t, ref.Text, b.c.key.key.ID(), "the refusal names the key it checked against")
		require.Contains(t, b.taskView(t, tk.ID).Flag, "signature", "the queue shows why the task does not start")

		// A task added through the engine is signed and runs.
		good := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
		last := b.waitEvent(t, 180*time.Second, func(e task.Event) bool { return e.TaskID == good && ended(e) })
		require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
		b.stop()
	}
	sessions, err := b.st.SessionList(ctx, tk.ID)
	require.NoError(t, err)
	require.Empty(t, sessions, "no agent was launched for the edited task")
	_, err = os.Stat(pwned)
	require.ErrorIs(t, err, os.ErrNotExist, "the edited verify command never ran")
	got, err := b.st.TaskGet(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, task.StateQueued, got.State)
}

// A task whose signature was blanked in the store is refused as unsigned:
// the upgrade's signing happens only when the key is created.
func TestUnsignedTaskIsRefusedOnceTheKeyExists(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{}, nil)
	b.stop()
	ctx := context.Background()
	tk, err := Prepare(task.Task{Title: "Unsigned", Goal: "g", Verify: "true", Harness: "scripted",
		Pipeline: task.Pipeline{task.PhaseImplement}}, b.repo, time.Now())
	require.NoError(t, err)
	require.NoError(t, b.st.TaskInsert(ctx, tk))
	b.start(t)
	ref := b.waitEvent(t, 30*time.Second, func(e task.Event) bool {
		return e.TaskID == tk.ID && e.Kind == task.EvRefusal && e.Reason == task.ReasonBadSignature
	})
	require.Contains(t, ref.Text, "the task has no signature")
}

// The engine that creates the fleet key (the first start after the upgrade
// to signed tasks) signs the tasks from before, once, each with an event,
// and runs them.
func TestNewKeySignsTasksFromBeforeSigning(t *testing.T) {
	t.Parallel()
	keyPath := filepath.Join(t.TempDir(), "fleet.key")
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, nil)
	b.stop()
	ctx := context.Background()
	tk, err := Prepare(task.Task{Title: "Old", Goal: project.Goal, Verify: project.VerifyCommand, Harness: "scripted",
		Pipeline: task.Pipeline{task.PhaseImplement}}, b.repo, time.Now())
	require.NoError(t, err)
	require.NoError(t, b.st.TaskInsert(ctx, tk)) // as an older version stored it

	b.cfg.Fleet.Key = keyPath
	b.start(t)
	signed := b.waitEvent(t, 30*time.Second, kindIs(task.EvTaskSigned))
	require.Equal(t, tk.ID, signed.TaskID)
	id, upgraded := b.c.FleetKey()
	require.Equal(t, 1, upgraded)
	require.Contains(t, signed.Text, id)
	last := b.waitEvent(t, 180*time.Second, func(e task.Event) bool { return e.TaskID == tk.ID && ended(e) })
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	fi, err := os.Stat(keyPath)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())

	b.stop()
	b.start(t)
	b.barrier(t)
	_, upgraded = b.c.FleetKey()
	require.Zero(t, upgraded, "the key exists now: nothing is signed again")
	require.Len(t, b.ledger(t, tk.ID, kindIs(task.EvTaskSigned)), 1)
}

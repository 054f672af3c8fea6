package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var importCases = []testCase{
	{"TaskImportWholeHistory", testTaskImport},
	{"TaskImportAllOrNothing", testTaskImportAllOrNothing},
	{"TaskImportRefusesAnotherTasksRecord", testTaskImportForeignRecord},
}

// testTaskImportForeignRecord pins that a record of another task refuses
// the whole import, naming it, and writes nothing.
func testTaskImportForeignRecord(t *testing.T, b *bundle) {
	p := b.importParams()
	p.DeadEnds[0].TaskID = "01SOMEONEELSE"
	err := b.st.TaskImport(b.ctx, p)
	require.Error(t, err)
	require.Contains(t, err.Error(), "a dead end belongs to task 01SOMEONEELSE")
	_, err = b.st.TaskGet(b.ctx, p.Task.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	require.Empty(t, b.events(t, p.Task.ID))
}

// importParams returns a task with one of every kind of history record.
func (b *bundle) importParams() store.TaskImportParams {
	tk := b.newTask()
	s := b.newSession(tk.ID, time.Second)
	s.Status, s.Token, s.EndedAt, s.Continuity = store.SessionExited, 0, b.at(time.Minute), `{"Ended":"handed off"}`
	content := []byte(`{"summary":"plan"}`)
	sum := sha256.Sum256(content)
	return store.TaskImportParams{
		Task:     tk,
		Sessions: []store.Session{s},
		Artifacts: []store.Artifact{{TaskID: tk.ID, Phase: task.PhasePlan, Content: content,
			SHA256: hex.EncodeToString(sum[:]), Session: s.ID, At: b.at(30 * time.Second)}},
		Decisions: []store.Decision{b.newDecision(tk.ID, 2*time.Second)},
		DeadEnds:  []store.DeadEnd{{TaskID: tk.ID, Phase: task.PhasePlan, Attempt: 1, Text: "tried X", At: b.at(40 * time.Second)}},
		Events:    []task.Event{b.event(tk.ID, task.EvTaskAdded)},
	}
}

// testTaskImport pins that an imported task reads back exactly, history and
// all, and that an imported artifact needs no lease token.
func testTaskImport(t *testing.T, b *bundle) {
	p := b.importParams()
	require.NoError(t, b.st.TaskImport(b.ctx, p))

	got, err := b.st.TaskGet(b.ctx, p.Task.ID)
	require.NoError(t, err)
	require.Equal(t, p.Task, got)
	sessions, err := b.st.SessionList(b.ctx, p.Task.ID)
	require.NoError(t, err)
	require.Equal(t, p.Sessions, sessions)
	arts, err := b.st.ArtifactList(b.ctx, p.Task.ID)
	require.NoError(t, err)
	require.Equal(t, p.Artifacts, arts)
	decisions, err := b.st.DecisionList(b.ctx, p.Task.ID)
	require.NoError(t, err)
	require.Equal(t, p.Decisions, decisions)
	deadEnds, err := b.st.DeadEndList(b.ctx, p.Task.ID)
	require.NoError(t, err)
	require.Equal(t, p.DeadEnds, deadEnds)
	b.requireEvents(t, p.Task.ID, p.Events...)
	token, err := b.st.TaskToken(b.ctx, p.Task.ID)
	require.NoError(t, err)
	require.Zero(t, token, "an import grants no lease")
}

// testTaskImportAllOrNothing pins that a failing record rolls back the task
// and every record before it, so a refused resume leaves nothing behind.
func testTaskImportAllOrNothing(t *testing.T, b *bundle) {
	existing := b.insertTask(t)
	taken := b.newDecision(existing.ID, time.Second)
	require.NoError(t, b.st.DecisionInsert(b.ctx, taken))

	p := b.importParams()
	dup := taken
	dup.TaskID = p.Task.ID
	p.Decisions = append(p.Decisions, dup) // same id as a stored decision
	require.Error(t, b.st.TaskImport(b.ctx, p))
	_, err := b.st.TaskGet(b.ctx, p.Task.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	sessions, err := b.st.SessionList(b.ctx, p.Task.ID)
	require.NoError(t, err)
	require.Empty(t, sessions)
	b.requireEvents(t, p.Task.ID)

	q := b.importParams()
	q.DeadEnds[0].TaskID = existing.ID // a record of another task
	require.Error(t, b.st.TaskImport(b.ctx, q))
	_, err = b.st.TaskGet(b.ctx, q.Task.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	deadEnds, err := b.st.DeadEndList(b.ctx, existing.ID)
	require.NoError(t, err)
	require.Empty(t, deadEnds)
}

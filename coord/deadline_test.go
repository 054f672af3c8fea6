package coord

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/postgres"
	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A store call of the loop on a connection whose bytes are dropped (a
// Toxiproxy timeout toxic of timeout 0 between the engine and PostgreSQL:
// a partition that closes nothing) fails at the store's call timeout
// instead of holding the loop for good: the command that made it answers
// with an error, the outage is said, and once the bytes pass again the
// outage ends by itself and a task added then is placed.
func TestALoopCallWhoseBytesAreDroppedFailsAndPlacementResumes(t *testing.T) {
	t.Parallel()
	p, db := pgtest.Proxied(t)
	const timeout = 2 * time.Second
	pg, err := postgres.Open(context.Background(), db, postgres.CallTimeout(timeout))
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() })
	b := setupWrapped(t, agent.Script{}, nil, func(store.Store) store.Store { return pg })
	<-b.c.Loaded()

	body, err := json.Marshal(map[string]any{"name": "drop", "type": "timeout", "stream": "upstream",
		"toxicity": 1.0, "attributes": map[string]any{"timeout": 0}})
	require.NoError(t, err)
	_, err = p.Toxics.AddToxicJson(strings.NewReader(string(body)))
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		_, err := b.c.Do(context.Background(), Command{Kind: CmdAdd, Task: &task.Task{
			Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: project.VerifyCommand,
			Harness: "scripted", Pipeline: task.Pipeline{task.PhaseImplement},
		}})
		done <- err
	}()
	select {
	case err := <-done:
		require.Error(t, err, "an add whose write reached no server")
	case <-time.After(30 * time.Second):
		t.Fatalf("the loop still waits on the store 30 s after its bytes stopped (call timeout %s)", timeout)
	}
	fault := b.waitEvent(t, 30*time.Second, refusalOf(task.ReasonStoreFailed)).Text
	require.Contains(t, fault, "PostgreSQL")

	require.NoError(t, p.Toxics.RemoveToxic(context.Background(), "drop"))
	b.waitEvent(t, 30*time.Second, kindIs(task.EvStoreRecovered))
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	b.waitEvent(t, time.Minute, func(e task.Event) bool { return e.Kind == task.EvSessionLaunched && e.TaskID == id })
}

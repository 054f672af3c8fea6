package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// ledgerTexts reads the texts of every event of the repository's ledger.
func ledgerTexts(t *testing.T, root string) []string {
	t.Helper()
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	defer st.Close()
	evs, err := st.EventList(context.Background(), store.EventListParams{})
	require.NoError(t, err)
	var out []string
	for _, e := range evs {
		out = append(out, e.Text)
	}
	return out
}

// With no engine running, the CLI's commands that need no session apply
// the coordinator's own transitions and write the engine's own texts.
func TestCommandsWithNoEngineUseTheEnginesCode(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	code, stdout, stderr := cli(t, "add", "-C", root, "--title", "Offline", "--goal", "g", "--verify", "true", "--pipeline", "implement")
	require.Equal(t, 0, code, stderr)
	id := strings.TrimSpace(stdout)
	code, stdout, stderr = cli(t, "correct", "-C", root, id, "use", "integers")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "queued for the next brief (no engine runs")
	code, stdout, stderr = cli(t, "park", "-C", root, id)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "parked")
	code, _, stderr = cli(t, "extend", "-C", root, id, "5m")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "needs a running engine")
	code, _, stderr = cli(t, "cancel", "-C", root, id)
	require.Equal(t, 0, code, stderr)
	texts := ledgerTexts(t, root)
	require.Contains(t, texts, "Task added: Offline (implement, harness scripted).")
	require.Contains(t, texts, "Parked by "+author()+".")
	require.Contains(t, texts, "Cancelled by "+author()+".")

	code, stdout, _ = cli(t, "stop", "-C", root)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "no engine runs")
}

// With an engine running, the CLI's commands go to it, and stop ends it.
func TestCommandsGoThroughARunningEngine(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	// No slot runs the scripted harness: the task stays queued, and no
	// agent starts in this test.
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte("[[slots]]\nname = \"only-shell\"\nharness = \"shell\"\ncapacity = 1\n"), 0o644))
	e, err := engine.Start(context.Background(), engine.Params{Dir: root, Version: "test"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Stop() })
	notices, unsub := e.Subscribe()
	defer unsub()
	code, stdout, stderr := cli(t, "add", "-C", root, "--title", "Live", "--goal", "g", "--verify", "true", "--pipeline", "implement")
	require.Equal(t, 0, code, stderr)
	id := task.ID(strings.TrimSpace(stdout))
	// The engine published it: it added the task itself.
	for n := range notices {
		if n.Event != nil && n.Event.Kind == task.EvTaskAdded {
			require.Equal(t, id, n.Event.TaskID)
			break
		}
	}
	code, _, stderr = cli(t, "park", "-C", root, string(id))
	require.Equal(t, 0, code, stderr)
	var tv coord.TaskView
	for _, v := range e.Snapshot().Tasks {
		if v.Task.ID == id {
			tv = v
		}
	}
	require.Equal(t, task.StateParked, tv.Task.State)

	// A second engine is refused with the first one's pid.
	code, _, stderr = cli(t, "engine", "--foreground", "-C", root)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "an engine already runs on this repository (pid ")

	code, stdout, stderr = cli(t, "stop", "-C", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "no session was running")
	require.Contains(t, stdout, "stopped")
	<-e.Done()
}

package coord

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// A worker reports from the moment it starts, but its launch is applied on
// the loop only after the launch fingerprint, which runs the agent's
// --version (up to ten seconds for a CLI that is slow to answer). A
// Confirmed report that arrives first must wait for the launch instead of
// being handled for a run that has no worker yet (which typed the brief
// into a nil worker and brought the console down).
func TestAReportBeforeItsLaunchIsAppliedWaitsForIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	hold := filepath.Join(dir, "hold")
	require.NoError(t, syscall.Mkfifo(hold, 0o600))
	self, err := os.Executable()
	require.NoError(t, err)
	// The agent's binary answers --version only when the test lets it.
	wrapper := filepath.Join(dir, "agent.sh")
	require.NoError(t, os.WriteFile(wrapper, fmt.Appendf(nil,
		"#!/bin/sh\nif [ \"$1\" = --version ]; then read -r _ < %q; echo held 1; exit 0; fi\nexec %q \"$@\"\n", hold, self), 0o755))

	early := make(chan worker.Report, 16)
	fixed := []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}
	b := setupHooked(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: fixed}},
	}}, func(cfg *config.Config) {
		h := cfg.Harness["scripted"]
		h.Argv = append([]string{wrapper}, h.Argv[1:]...)
		cfg.Harness["scripted"] = h
	}, func(c *Coordinator) { c.onEarlyReport = func(rep worker.Report) { early <- rep } })
	b.addPipeline(t, task.Pipeline{task.PhaseImplement})

	select {
	case rep := <-early:
		require.Equal(t, worker.Confirmed, rep.Kind)
	case <-time.After(30 * time.Second):
		t.Fatalf("no report arrived before its launch was applied; events:\n%s", b.dump())
	}
	f, err := os.OpenFile(hold, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, f.Close())

	launched := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	confirmed := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionConfirmed))
	require.Equal(t, launched.SessionID, confirmed.SessionID)
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
}

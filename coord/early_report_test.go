package coord

import (
	"context"
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
	}, func(c *Coordinator) { c.reporter.onEarlyReport = func(rep worker.Report) { early <- rep } })
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

// A worker's report can reach the loop after the closure that ended its run
// (the loop picks among ready channels at random). A late stuck or unstuck
// notice from a session that is gone is no write and must not be shown to
// the operator as a refused one; a late phase-finished still is.
func TestALateReportOfAnEndedSessionIsNotAStaleWrite(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, nil)
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})
	launched := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	b.waitEvent(t, 60*time.Second, ended)
	ctx := context.Background()
	applied := make(chan struct{})
	b.c.back <- func() {
		defer close(applied)
		for _, k := range []worker.ReportKind{worker.Stuck, worker.Unstuck, worker.Refused, worker.PhaseFinished} {
			b.c.reporter.handleReport(ctx, worker.Report{Kind: k, TaskID: id, SessionID: launched.SessionID, Token: 1,
				Refusal: &task.Refusal{Reason: task.ReasonArtifactSchema}})
		}
	}
	select {
	case <-applied:
	case <-time.After(10 * time.Second):
		t.Fatal("the loop did not apply the late reports")
	}
	stale := b.ledger(t, id, refusalOf(task.ReasonStaleLeaseToken))
	require.Len(t, stale, 1, "only the phase-finished report would have written: %v", stale)
	require.Contains(t, stale[0].Text, string(worker.PhaseFinished))
}

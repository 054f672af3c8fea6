package coord

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A verify gate whose task was parked and unparked while it ran belongs to
// a session that is gone: when it comes back, a new session holds the task
// (or is in its own gate). The old gate's result must not move the task,
// commit the new session's half-done work or count as its verdict.
func TestAGateOfAReplacedSessionIsIgnored(t *testing.T) {
	t.Parallel()
	fixed := []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: fixed}},
	}}, nil)
	hold, id := b.addHeldGate(t)
	ctx := context.Background()

	first := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	require.NoError(t, syscall.Mkfifo(hold, 0o600))
	b.waitEvent(t, 30*time.Second, kindIs(task.EvVerifyStarted))
	_, err := b.c.Do(ctx, Command{Kind: CmdPark, TaskID: id})
	require.NoError(t, err)
	_, err = b.c.Do(ctx, Command{Kind: CmdUnpark, TaskID: id})
	require.NoError(t, err)
	second := b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	require.NotEqual(t, first.SessionID, second.SessionID)
	b.waitEvent(t, 30*time.Second, kindIs(task.EvBriefDelivered))

	// Release every gate waiting on the fifo (the first one, and the
	// second session's if it got there).
	release(t, hold)

	last := b.waitEvent(t, 90*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	require.Equal(t, second.SessionID, last.SessionID, "the second session's own gate finished the task")
	require.Empty(t, b.ledger(t, id, refusalOf(task.ReasonStaleLeaseToken)), "the old gate tried to move the task:\n%s", b.dump())
	for _, e := range b.ledger(t, id, kindIs(task.EvTaskAwaiting)) {
		require.Equal(t, second.SessionID, e.SessionID)
	}
}

// addHeldGate adds an implement-only task whose verify gate waits on a fifo
// while it exists, so a test decides when a gate's result comes back. The
// baseline runs before the test makes the fifo. The agent runs the same
// command and must not wait: it has the re-exec variable in its
// environment, the console does not.
func (b *bundle) addHeldGate(t *testing.T) (string, task.ID) {
	t.Helper()
	hold := filepath.Join(t.TempDir(), "hold")
	verifyCmd := fmt.Sprintf("if [ -z \"${%s:-}\" ] && [ -p %q ]; then cat %q >/dev/null; fi; %s",
		agent.ReexecEnv, hold, hold, project.VerifyCommand)
	return hold, b.addTask(t, "scripted", verifyCmd, task.Pipeline{task.PhaseImplement})
}

// release lets every gate waiting on the fifo go on, and later ones run
// freely.
func release(t *testing.T, hold string) {
	t.Helper()
	f, err := os.OpenFile(hold, os.O_WRONLY, 0)
	require.NoError(t, err)
	require.NoError(t, os.Remove(hold))
	require.NoError(t, f.Close())
}

// Parking a task in its verify gate releases its lease: no session holds
// it, and a lease row left behind would show a holder for a parked task
// until the next start.
func TestParkingATaskInItsGateReleasesTheLease(t *testing.T) {
	t.Parallel()
	fixed := []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: fixed}},
	}}, nil)
	hold, id := b.addHeldGate(t)
	ctx := context.Background()
	b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	require.NoError(t, syscall.Mkfifo(hold, 0o600))
	b.waitEvent(t, 30*time.Second, kindIs(task.EvVerifyStarted))
	_, err := b.st.LeaseGet(ctx, id)
	require.NoError(t, err, "the gate runs under the session's lease")
	_, err = b.c.Do(ctx, Command{Kind: CmdPark, TaskID: id})
	require.NoError(t, err)
	_, err = b.st.LeaseGet(ctx, id)
	require.ErrorIs(t, err, store.ErrNotFound, "the parked task still has a lease")
	release(t, hold)
	b.waitEvent(t, 60*time.Second, func(e task.Event) bool {
		return e.Kind == task.EvVerifyFinished && strings.Contains(e.Text, "is ignored")
	})
	tk, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.StateParked, tk.State)
}

// Expiring a task in its verify gate is refused with a reason the operator
// can act on: there is no session to stop, the gate decides next.
func TestExpireInTheGateSaysWhatToDo(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, nil)
	hold, id := b.addHeldGate(t)
	ctx := context.Background()
	b.waitEvent(t, 30*time.Second, kindIs(task.EvSessionLaunched))
	require.NoError(t, syscall.Mkfifo(hold, 0o600))
	b.waitEvent(t, 30*time.Second, kindIs(task.EvVerifyStarted))
	_, err := b.c.Do(ctx, Command{Kind: CmdExpire, TaskID: id})
	require.ErrorContains(t, err, "verify gate")
	require.ErrorContains(t, err, "park")
	release(t, hold)
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
}

// Parking a task while its work is being committed (after the last green
// gate) releases its lease, and the commit's result then moves nothing.
func TestParkingDuringTheCommitReleasesTheLease(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, nil)
	// git runs post-commit even with --no-verify, and waits for it: the
	// hook holds the commit until the test lets it go.
	hold := filepath.Join(t.TempDir(), "hold")
	require.NoError(t, syscall.Mkfifo(hold, 0o600))
	hook := filepath.Join(b.root, ".git", "hooks", "post-commit")
	require.NoError(t, os.MkdirAll(filepath.Dir(hook), 0o755))
	require.NoError(t, os.WriteFile(hook, fmt.Appendf(nil, "#!/bin/sh\nif [ -p %q ]; then read -r _ < %q; fi\nexit 0\n", hold, hold), 0o755))
	id := b.addPipeline(t, task.Pipeline{task.PhaseImplement})

	b.waitEvent(t, 60*time.Second, func(e task.Event) bool {
		return e.Kind == task.EvVerifyFinished && strings.HasPrefix(e.Text, "Verify gate: ")
	})
	f, err := os.OpenFile(hold, os.O_WRONLY, 0) // returns once the hook waits
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.Remove(hold); _ = f.Close() }) // before the coordinator's shutdown waits for the commit
	ctx := context.Background()
	_, err = b.c.Do(ctx, Command{Kind: CmdPark, TaskID: id})
	require.NoError(t, err)
	_, err = b.st.LeaseGet(ctx, id)
	require.ErrorIs(t, err, store.ErrNotFound, "the parked task still has a lease")
	require.NoError(t, os.Remove(hold))
	require.NoError(t, f.Close())

	note := b.waitEvent(t, 30*time.Second, func(e task.Event) bool {
		return e.TaskID == id && strings.Contains(e.Text, "is ignored")
	})
	require.Contains(t, note.Text, "parked or cancelled")
	tk, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.Equal(t, task.StateParked, tk.State)
	require.Len(t, b.ledger(t, id, func(e task.Event) bool { return e.Kind == task.EvRefusal }), 1,
		"the ignored commit is the one refusal; no stale move was tried:\n%s", b.dump())
}

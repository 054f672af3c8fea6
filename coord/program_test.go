package coord

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A task whose harness's program is not installed is not leased: it waits
// queued, with one refusal naming the program, and no attempt counted,
// however long it waits. Once the program is there, it is leased within
// programRecheck and runs.
func TestFakeMissingProgramWaitsWithOneRefusalAndNoAttempt(t *testing.T) {
	t.Parallel()
	prog := filepath.Join(t.TempDir(), "ghost-agent")
	synctest.Test(t, func(t *testing.T) {
		b := setupFake(t, func(c *config.Config) {
			c.Harness["ghost"] = session.Spec{
				Name: "ghost", Argv: []string{prog}, Delivery: session.DeliveryType, Resubmit: session.ResubmitSubmit,
			}
		})
		id := b.addTask(t, "ghost", "true", task.Pipeline{task.PhaseImplement})
		missing := b.waitEvent(t, refusalOf(task.ReasonProgramMissing))
		require.Contains(t, missing.Text, prog)
		require.Contains(t, missing.Text, "no attempt counted")

		time.Sleep(10 * time.Minute) // many ticks and rechecks, on the bubble's clock
		b.barrier(t)
		tv := b.taskView(t, id)
		require.Equal(t, task.StateQueued, tv.Task.State)
		require.Zero(t, tv.Task.Attempt, "waiting for a program charges nothing")
		require.True(t, strings.HasPrefix(tv.Flag, FlagProgramMissing), "the list shows why it waits: %q", tv.Flag)
		require.Contains(t, tv.Flag, prog)
		var refusals int
		for _, e := range b.events {
			require.NotEqual(t, task.EvTaskLeased, e.Kind, b.dump())
			if e.Reason == task.ReasonProgramMissing {
				refusals++
			}
		}
		require.Equal(t, 1, refusals, "said once, not on every tick:\n%s", b.dump())

		require.NoError(t, os.WriteFile(prog, []byte("#!/bin/sh\nexit 0\n"), 0o755))
		leased := b.waitEvent(t, kindIs(task.EvTaskLeased))
		require.LessOrEqual(t, leased.At.Sub(missing.At), 10*time.Minute+programRecheck+2*time.Second)
		require.True(t, strings.Contains(leased.Text, "attempt 1"), leased.Text)
		a, _ := b.launch(t)
		a.Finish(nil)
		require.Equal(t, task.EvTaskAwaiting, b.waitEvent(t, ended).Kind, b.dump())
		require.Empty(t, b.taskView(t, id).Flag)
	})
}

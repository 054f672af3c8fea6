package coord

import (
	"context"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// An engine frozen between its push's lease check and the push itself
// (SIGSTOP, a stalled machine) past its own trust window pushes nothing
// when it wakes: the lease it read may be another engine's by then, and a
// takeover's session may be working from the commit the push would
// replace (the fault run: a remote branch's tip that no session's push
// event accounts for). The push waits until a beat lands again and then
// reads the lease afresh.
func TestFakeAnEngineFrozenBeforeItsPushPushesNothingUntilABeatLands(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := setupFakeWrapped(t, func(cfg *config.Config) { cfg.Fleet.Remote = "origin" },
			func(st store.Store) store.Store { return sharedStore{st} })
		remote := b.bareOrigin(t)
		window := b.c.sd.trustWindow()
		var frozen atomic.Int32
		b.c.gate.beforePush = func() {
			if frozen.Add(1) == 1 {
				time.Sleep(window + time.Second) // the machine stops here
			}
		}
		id := b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		b.c.NoteBeat(time.Now(), nil)
		a.Finish(nil)
		b.waitEvent(t, func(e task.Event) bool {
			return e.Reason == task.ReasonStoreFailed && strings.Contains(e.Text, "stepped down")
		})
		time.Sleep(2 * time.Second) // the frozen push wakes
		b.barrier(t)
		require.EqualValues(t, 1, frozen.Load(), "the push never reached its last check")
		tk, err := b.st.TaskGet(context.Background(), id)
		require.NoError(t, err)
		out, err := exec.Command("git", "--git-dir", remote, "rev-parse", "--verify", "-q", "refs/heads/"+tk.Branch).CombinedOutput()
		require.Error(t, err, "an engine past its trust window pushed %s", out)
		require.Empty(t, b.ledger(t, id, kindIs(task.EvBranchPushed)), b.dump())

		b.c.NoteBeat(time.Now(), nil)
		b.waitEvent(t, kindIs(task.EvBranchPushed))
		out, err = exec.Command("git", "--git-dir", remote, "rev-parse", "--verify", "refs/heads/"+tk.Branch).CombinedOutput()
		require.NoError(t, err, "the push never landed once the engine trusted itself again: %s\n%s", out, b.dump())
		require.Equal(t, task.EvTaskAwaiting, b.waitEvent(t, ended).Kind, b.dump())
	})
}

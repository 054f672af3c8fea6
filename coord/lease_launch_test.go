package coord

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A session whose launch takes longer than a lease length keeps its lease
// until its launch is confirmed, within the harness's launch_timeout: a CLI
// that shows a blank screen until its prompt is ready (opencode on a
// loaded machine took 40 s) makes no visible progress while it starts,
// and lost its lease before it could begin.
func TestASlowLaunchIsBoundedByItsLaunchTimeoutNotItsLease(t *testing.T) {
	t.Parallel()
	// Blank for three lease lengths, then a prompt; the work comes once
	// the brief is typed.
	slow := func(cfg *config.Config) {
		oneShot(t, `READY>`, "sleep 3\necho 'READY>'\nread line\n"+writeWork+"\nexit 0")(cfg)
		h := cfg.Harness["oneshot"]
		h.Delivery = "type"
		cfg.Harness["oneshot"] = h
		cfg.Lease.Length.Duration, cfg.Lease.Window.Duration = time.Second, 500*time.Millisecond
		cfg.Lease.Tick.Duration = 50 * time.Millisecond
	}
	b := setup(t, agent.Script{}, slow)
	id := b.addOn(t, "oneshot", task.Pipeline{task.PhaseImplement})
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	require.Empty(t, b.ledger(t, id, kindIs(task.EvLeaseExpired)), b.dump())
	var launching int
	for _, e := range b.ledger(t, id, kindIs(task.EvLeaseRenewed)) {
		if strings.Contains(e.Text, "launches") {
			launching++
		}
	}
	require.NotZero(t, launching, "renewed while it launched:\n%s", b.dump())
	b.requireNothingStranded(t, id)
}

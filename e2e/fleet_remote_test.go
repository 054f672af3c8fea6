package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestFleetRemoteConsoleDrawsAnotherEnginesPane attaches a console over
// `--remote` (a real sshd on 127.0.0.1, keys made for the test) to
// machine-a's engine while machine-b's engine holds the only session.
// Machine-a reaches machine-b's engine over ssh too, at the destination
// machine-b's heartbeat advertises ([fleet] ssh), and relays its pane: the
// console shows the agent's screen, a correction typed there reaches
// machine-b's agent exactly once, the extend key extends machine-b's
// lease, and a key typed in focus mode reaches the agent as well.
func TestFleetRemoteConsoleDrawsAnotherEnginesPane(t *testing.T) {
	parallel(t)
	srv := startSSHD(t)
	record := t.TempDir()
	pace := 10
	// The agent sits on its first brief until nudged: the session stays
	// live for as long as the test needs it.
	f := newFleetWith(t, []string{"machine-a", "machine-b"}, 1, agent.Script{PaceMS: &pace, RecordDir: record,
		Phases: map[task.Phase][]agent.Entry{task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst,
			Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}}}})
	f.environ = []string{engine.SSHCommandEnv + "=ssh -F " + srv.config}
	b := f.engines["machine-b"]
	conf, err := os.OpenFile(filepath.Join(b.dir, "orchestra.toml"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = conf.WriteString("ssh = \"127.0.0.1\"\n") // under [fleet], the file's last table
	require.NoError(t, err)
	require.NoError(t, conf.Close())

	ctx := context.Background()
	f.start(t, "machine-b")
	id := f.add(t, "machine-b", 1)[0]
	var held store.Session
	f.waitStore(t, 3*time.Minute, "machine-b runs the session", func() bool {
		ss, err := f.st.SessionList(ctx, id)
		require.NoError(t, err)
		for _, s := range ss {
			if s.Status == store.SessionConfirmed {
				held = s
				return true
			}
		}
		return false
	})
	require.Equal(t, f.engineOf(t, "machine-b").ID, held.Holder)
	adv := f.engineOf(t, "machine-b")
	require.Equal(t, "127.0.0.1", adv.SSH, "machine-b advertises [fleet] ssh")
	require.Equal(t, f.bin, adv.Bin, "machine-b advertises its own binary")
	f.start(t, "machine-a")

	// The console runs elsewhere and reaches machine-a's engine over ssh;
	// everything machine-b's session shows comes through machine-a.
	a := f.engines["machine-a"]
	cmdline := "cd / && " + shellQuote(f.bin) + " --remote " + shellQuote("127.0.0.1:"+a.dir) +
		" --remote-bin " + shellQuote(f.bin) + `; echo "console exited with status $?"; exec sleep 3600`
	tm := startTerm(t, cmdline, engine.SSHCommandEnv+"=ssh -F "+srv.config, "COLORTERM=truecolor", "USER=operator")
	tm.waitText(time.Minute, "fleet 1", "implement · running", strings.TrimSpace(agent.ReadyMarker))
	logA, err := os.ReadFile(a.log.Name())
	require.NoError(t, err)
	require.Contains(t, string(logA), "drawing the panes of the engine on machine-b", "machine-a relays machine-b's pane")

	const correction = "through machine-a: keep Add pure"
	tm.answer("c", correction, 5*time.Second, "correction: ")
	tm.waitText(30*time.Second, "received human decision: "+correction)

	// Commands on the session go to the engine that holds it: the lease
	// machine-b holds is extended from machine-a's console.
	tm.keys("e")
	tm.waitText(20*time.Second, "lease extended by 10m0s")
	evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
	require.NoError(t, err)
	extended := 0
	for _, ev := range evs {
		if ev.Kind == task.EvLeaseExtended {
			extended++
			require.Equal(t, held.ID, ev.SessionID)
		}
	}
	require.Equal(t, 1, extended, "machine-b extended its session's lease once")

	// A key typed in focus mode goes through machine-a to machine-b's
	// pty: a bare Enter nudges the brief the agent sat on, and it works.
	tm.keys("i")
	tm.waitText(5*time.Second, "FOCUS")
	tm.keys("Enter")
	f.waitStore(t, 3*time.Minute, "the nudged agent finishes its phase on machine-b", func() bool {
		tk, err := f.st.TaskGet(ctx, id)
		require.NoError(t, err)
		return tk.State == task.StateAwaitingReview
	})

	inputs, err := agent.ReadInputLog(record)
	require.NoError(t, err)
	decisions, bare := 0, 0
	for _, in := range inputs {
		switch in.Kind {
		case agent.InputDecision:
			decisions++
			require.Contains(t, in.Text, correction)
			require.Equal(t, held.ID, in.Session, "the correction reached machine-b's session")
		case agent.InputOther:
			if strings.TrimSpace(in.Text) == "" {
				bare++
			}
		}
	}
	require.Equal(t, 1, decisions, "the agent received the correction exactly once")
	require.Equal(t, 1, bare, "the Enter typed in machine-a's console reached machine-b's agent once")
	logA, err = os.ReadFile(a.log.Name())
	require.NoError(t, err)
	require.NotContains(t, string(logA), "lost the engine on machine-b", "the relay kept its one connection")
	ds, err := f.st.DeliveryList(ctx, id)
	require.NoError(t, err)
	require.Len(t, ds, 1)
	require.Equal(t, held.ID, ds[0].SessionID)
}

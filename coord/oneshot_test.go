package coord

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// oneShot adds the harness "oneshot": /bin/sh runs body with the brief as
// its last argument (delivery "arg") and then exits, as `claude -p` or
// `codex exec` do. The harness names no env, so it runs on the default
// allow-list: body finds cp and touch on PATH. $FIX holds the fixed
// calc.go and a valid implement artifact.
func oneShot(t *testing.T, ready, body string) func(*config.Config) {
	t.Helper()
	fix := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(fix, "calc.go"), []byte(project.CalcFixed), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(fix, "implement.json"), []byte(task.Example(task.PhaseImplement)), 0o644))
	script := fmt.Sprintf("FIX=%q\nmkdir -p .orchestra\n%s\n", fix, body)
	return func(cfg *config.Config) {
		cfg.Harness["oneshot"] = session.Spec{
			Name: "oneshot", Argv: []string{"/bin/sh", "-c", script, "oneshot"},
			Delivery: session.DeliveryArg, Ready: ready, Quiet: session.Duration{Duration: 100 * time.Millisecond},
			LaunchTimeout: session.Duration{Duration: 30 * time.Second},
		}
		cfg.Lease.MaxAttempts = 1
	}
}

func (b *bundle) addOn(t *testing.T, harness string, p task.Pipeline) task.ID {
	t.Helper()
	return b.addTask(t, harness, project.VerifyCommand, p)
}

// requireNothingStranded checks the store the way a start-up would: no task
// is leased or running, and no session is recorded as still running.
func (b *bundle) requireNothingStranded(t *testing.T, id task.ID) {
	t.Helper()
	ctx := context.Background()
	got, err := b.st.TaskGet(ctx, id)
	require.NoError(t, err)
	require.False(t, got.State.Live(), "task %s is %s after the run ended", id, got.State)
	ss, err := b.st.SessionList(ctx, id)
	require.NoError(t, err)
	for _, s := range ss {
		require.NotContains(t, []store.SessionStatus{store.SessionLaunching, store.SessionConfirmed}, s.Status, "session %s", s.ID)
	}
}

func (b *bundle) lastSession(t *testing.T, id task.ID) store.Session {
	t.Helper()
	ss, err := b.st.SessionList(context.Background(), id)
	require.NoError(t, err)
	require.NotEmpty(t, ss)
	return ss[len(ss)-1]
}

const writeWork = `cp "$FIX/calc.go" calc.go && cp "$FIX/implement.json" .orchestra/implement.json && touch .orchestra/done`

// A one-shot agent that writes a valid artifact and the sentinel and exits
// 0 has finished its phase: sealed, verified, waiting for review.
func TestOneShotExitZeroFinishesThePhase(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{}, oneShot(t, "", writeWork+"\nexit 0"))
	id := b.addOn(t, "oneshot", task.Pipeline{task.PhaseImplement})
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	require.Len(t, b.ledger(t, id, kindIs(task.EvArtifactSealed)), 1)
	require.Empty(t, b.ledger(t, id, kindIs(task.EvDeadEnd)), b.dump())
	s := b.lastSession(t, id)
	require.Equal(t, store.SessionExited, s.Status)
	require.Equal(t, 0, s.ExitCode)
	require.NotEmpty(t, s.Brief, "the brief it got as its argument is stored")
	b.requireNothingStranded(t, id)
}

// Exiting non-zero after a valid seal still finishes the phase; the status
// is recorded on the session and in the ledger.
func TestOneShotExitNonZeroAfterSealFinishesAndRecordsStatus(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{}, oneShot(t, "", writeWork+"\nexit 3"))
	id := b.addOn(t, "oneshot", task.Pipeline{task.PhaseImplement})
	last := b.waitEvent(t, 60*time.Second, ended)
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	s := b.lastSession(t, id)
	require.Equal(t, store.SessionExited, s.Status)
	require.Equal(t, 3, s.ExitCode)
	exits := b.ledger(t, id, kindIs(task.EvSessionExited))
	require.NotEmpty(t, exits)
	// The exit is seen after the seal ("exited with code 3 after writing
	// it") or, on a busy machine, the sentinel first and the exit while the
	// session is being stopped: the status is recorded either way.
	require.Regexp(t, `exited with code 3 after writing it|\(exit 3\)`, exits[len(exits)-1].Text, b.dump())
	b.requireNothingStranded(t, id)
}

// One that exits without a valid artifact is a dead end, and the dead end
// says why: the next brief must tell the agent what was missing.
func TestOneShotExitWithoutArtifactIsADeadEndWithItsReason(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ body, want string }{
		"nothing":       {"exit 0", "without writing .orchestra/done, and left no .orchestra/implement.json"},
		"no sentinel":   {`cp "$FIX/implement.json" .orchestra/implement.json; exit 0`, "without writing .orchestra/done, although .orchestra/implement.json is valid"},
		"invalid, done": {"echo '{\"summary\": 1}' > .orchestra/implement.json; touch .orchestra/done; exit 2", "implement.json"},
		"only sentinel": {"touch .orchestra/done; exit 0", "implement.json"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, agent.Script{}, oneShot(t, "", c.body))
			id := b.addOn(t, "oneshot", task.Pipeline{task.PhaseImplement})
			last := b.waitEvent(t, 60*time.Second, ended)
			require.Equal(t, task.EvTaskFailed, last.Kind, b.dump())
			require.Empty(t, b.ledger(t, id, kindIs(task.EvArtifactSealed)))
			dead := b.ledger(t, id, kindIs(task.EvDeadEnd))
			require.Len(t, dead, 1, b.dump())
			require.Contains(t, dead[0].Text, c.want)
			ds, err := b.st.DeadEndList(context.Background(), id)
			require.NoError(t, err)
			require.Len(t, ds, 1)
			require.Contains(t, ds[0].Text, c.want, "the next brief lists it")
			b.requireNothingStranded(t, id)
		})
	}
}

// A phase sealed before the launch was confirmed confirms it: here the
// ready marker never shows (a banner that scrolled away, a one-shot agent
// that prints nothing), the agent finishes and exits, and the task still
// moves through running to awaiting review instead of being refused there
// as "leased".
func TestASealBeforeConfirmationConfirmsTheSession(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"exits":         writeWork + "\nexit 0",
		"stays running": writeWork + "\necho finished\nexec sleep 600",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, agent.Script{}, oneShot(t, "NEVER-SHOWN", body))
			id := b.addOn(t, "oneshot", task.Pipeline{task.PhaseImplement})
			last := b.waitEvent(t, 60*time.Second, ended)
			require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
			confirmed := b.ledger(t, id, kindIs(task.EvSessionConfirmed))
			require.Len(t, confirmed, 1)
			require.Contains(t, confirmed[0].Text, "confirmed by its artifact")
			require.Empty(t, b.ledger(t, id, refusalOf(task.ReasonIllegalTransition)), b.dump())
			b.requireNothingStranded(t, id)
		})
	}
}

package e2e

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agentcli"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestHungCodexLeaseNeedsItsVolatilePatterns runs the real Codex CLI on
// its built-in harness against a stub that never answers, and shows that
// the harness's volatile patterns are what let the hung session lose its
// lease.
//
// While it waits, Codex draws "• Working (12s • esc to interrupt)". The
// ticking counter is masked by the console's default patterns for any
// harness ("12s", "1m 03s"). Where the terminal is not truecolor (a user's
// COLORTERM unset by set_env, or a 256-colour terminal), Codex also blinks
// the bullet, "•" and "◦" every 600 ms; with truecolor it shimmers the
// bullet's colour instead, which no text fingerprint sees. The test runs
// without truecolor, where the blink is on screen:
//   - without the built-in patterns (volatile = [] in the harness) the blink
//     is progress: the lease is renewed again and again and still held two
//     lease lengths after the stub took the request it never answers;
//   - with them the same pane shows no progress and the lease runs out
//     within one lease length of the last real change.
func TestHungCodexLeaseNeedsItsVolatilePatterns(t *testing.T) {
	t.Parallel()
	bin := agentcli.Codex.Require(t)
	for _, c := range []struct {
		name    string
		builtin bool
	}{{"without the built-in patterns the blink keeps the lease", false}, {"with them the lease is lost", true}} {
		t.Run(c.name, func(t *testing.T) {
			parallel(t)
			root, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			require.NoError(t, project.WriteProject(root))
			held := make(chan time.Time, 1)
			srv := modelstub.New([]modelstub.Rule{{Name: "hung", When: modelstub.Request.IsMainLoop,
				Reply: func(modelstub.Request) modelstub.Reply {
					select {
					case held <- time.Now():
					default:
					}
					return modelstub.Reply{Hold: true}
				}}})
			srv.Logf = t.Logf
			base, err := srv.Start()
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, srv.Close()) })

			r, err := repo.Open(root)
			require.NoError(t, err)
			st, err := sqlite.Open(sqlite.DefaultPath(root))
			require.NoError(t, err)
			t.Cleanup(func() { st.Close() })
			tk, err := coord.Prepare(task.Task{Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance,
				Verify: project.VerifyCommand, Harness: "codex"}, r, time.Now())
			require.NoError(t, err)
			require.NoError(t, st.TaskInsert(t.Context(), signedTask(t, tk)))

			cfg := config.Default()
			spec := cfg.Harness["codex"]
			require.NotEmpty(t, spec.Volatile, "the built-in codex harness has volatile patterns")
			spec.Argv = append([]string{bin}, spec.Argv[1:]...)
			spec.SetEnv = seedCodex(t, t.TempDir(), base, root)
			// 256 colours, not truecolor: Codex blinks its bullet.
			spec.SetEnv["COLORTERM"] = ""
			if !c.builtin {
				spec.Volatile = []string{}
			}
			cfg.Harness["codex"] = spec
			length := 3 * time.Second
			cfg.Lease.Length.Duration, cfg.Lease.Window.Duration = length, 2500*time.Millisecond
			cfg.Lease.Tick.Duration = 100 * time.Millisecond
			cfg.Lease.MaxRenewals = 1000
			cfg.Lease.MaxAttempts = 1
			cfg.Stuck.AutoResubmit = 0
			b := &bundle{root: root, srv: srv, st: st, repo: r, cfg: cfg}
			b.start(t)

			b.waitEvent(t, tk.ID, 3*time.Minute, func(e task.Event) bool { return e.Kind == task.EvBriefDelivered })
			var heldAt time.Time
			select {
			case heldAt = <-held:
			case <-time.After(2 * time.Minute):
				t.Fatalf("Codex never sent the brief to the stub:\n%s", b.dump())
			}
			pane := func() string {
				if v, ok := b.c.Pane(tk.ID); ok {
					return v.Text()
				}
				return ""
			}
			if !c.builtin {
				// Renewed past two lease lengths of a model that never
				// answered: only the blinking bullet changed.
				e := b.waitEvent(t, tk.ID, 2*time.Minute, func(e task.Event) bool {
					if e.Kind == task.EvLeaseExpired {
						t.Fatalf("the lease expired without the built-in patterns: the blink was not progress after all\npane:\n%s\nevents:\n%s", pane(), b.dump())
					}
					return e.Kind == task.EvLeaseRenewed && e.At.Sub(heldAt) > 2*length
				})
				t.Logf("lease renewed at %v after the held request, pane:\n%s", e.At.Sub(heldAt).Round(100*time.Millisecond), pane())
				require.Regexp(t, `[•◦] Working \(`, pane())
				return
			}
			lastProgress, renewals := heldAt, 0
			e := b.waitEvent(t, tk.ID, 2*time.Minute, func(e task.Event) bool {
				if e.Kind == task.EvLeaseRenewed && e.At.After(heldAt) {
					renewals++
					lastProgress = e.At
				}
				return e.Kind == task.EvLeaseExpired
			})
			// The request's own output (the status line appearing) may
			// earn a renewal or two on a loaded machine; a blink that
			// counted would renew every window.
			require.LessOrEqual(t, renewals, 2, "renewals after the held request:\n%s", b.dump())
			// Every renewal is an event, so none went unseen; the bound
			// only says the expiry was not put off by a window more. The
			// lease tick that sees it may come late on a loaded machine
			// (a fresh-clone run: 4.9 s after a 3 s lease's last renewal).
			require.Less(t, e.At.Sub(lastProgress), 2*length,
				"the lease ran out within two lease lengths (%v each) of the last progress", length)
		})
	}
}

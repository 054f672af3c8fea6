package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agentcli"
	"github.com/orchestra-tui/orchestra-tui/demo/scenario"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestDemoWithCodex runs the demo's scenario with the real Codex CLI
// (@openai/codex) in every pane, on its built-in harness, against the
// stub of the OpenAI Responses API: every phase's artifact sealed, the
// research pane stuck and resubmitted, the invalid plan refused and
// rewritten, the correction delivered exactly once into implement attempt
// 1, whose model then never answers, the verify gate red then green, the
// approval, and the usage the console read from Codex's rollout files
// equal to the stub's token counts (the demo's own proofs).
//
// It also holds Codex to two of its defaults:
//   - the hung Codex (its request held open, its "• Working (Ns)" counter
//     ticking) loses its lease within one lease length of its last
//     progress: the built-in volatile pattern masks the counter, so no
//     renewal is granted for it;
//   - once its sessions have stopped, no process of theirs remains (the
//     built-in --no-daemon: without it Codex leaves `codex app-server`
//     daemons behind).
func TestDemoWithCodex(t *testing.T) {
	t.Parallel()
	agentcli.Codex.Require(t)
	demoWithAgent(t, "codex")
}

// demoWithAgent runs the demo's scenario in-process with the named CLI
// (scenario.AgentNames) and checks its proofs, the hung session's lease
// and that no process of the sessions remains.
func demoWithAgent(t *testing.T, name string) {
	tmp := t.TempDir()
	s, err := scenario.Prepare(scenario.Options{Fast: true, TempDir: tmp, Harness: mustAgent(t, name, t.Logf)})
	require.NoError(t, err)
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = s.Close()
		}
	})
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	var out bytes.Buffer
	started := time.Now()
	code := scenario.RunHeadless(ctx, s, &out)
	t.Logf("demo --agent %s took %v:\n%s", name, time.Since(started).Round(100*time.Millisecond), out.String())
	require.Equal(t, 0, code, "the demo exits 0")
	text := out.String()
	for _, claim := range []string{scenario.ClaimContinuity, scenario.ClaimDirect, scenario.ClaimGate, scenario.ClaimBeats, scenario.ClaimUsage} {
		require.Contains(t, text, "proof: "+claim+" ok\n")
	}
	require.Equal(t, 1, strings.Count(text, "decision.delivered"), "the correction is delivered exactly once")

	// The hung session's lease: from the correction (after which the stub
	// never answers) to the expiry, only the renewals the correction's own
	// input earned, and the expiry within one lease length of the last.
	evs, err := s.Opened.Store.EventList(ctx, store.EventListParams{TaskID: s.ID})
	require.NoError(t, err)
	var delivered, expired, lastProgress time.Time
	renewals := 0
	for _, e := range evs {
		switch {
		case e.Kind == task.EvDecisionDelivered:
			delivered, lastProgress = e.At, e.At
		case !delivered.IsZero() && expired.IsZero() && e.Kind == task.EvLeaseRenewed:
			renewals++
			lastProgress = e.At
		case !delivered.IsZero() && expired.IsZero() && e.Kind == task.EvLeaseExpired:
			expired = e.At
		}
	}
	require.False(t, expired.IsZero(), "the hung session's lease expired")
	length := s.Opened.Config.Lease.Length.Duration
	// The correction's own echo and the submit that follows it are
	// progress (one or two renewals on a loaded machine); a counter that
	// counted would renew every window up to lease.max_renewals.
	require.LessOrEqual(t, renewals, 3, "no renewal for the ticking counter after the correction")
	require.LessOrEqual(t, expired.Sub(lastProgress), length+time.Second,
		"the lease ran out within one lease length (%v) of the last progress", length)

	require.NoError(t, s.Close())
	closed = true
	// Every session has stopped: nothing started under the demo's
	// directory (Codex's HOME, its worktrees) is still running.
	require.Empty(t, processesUnder(t, tmp), "processes of the %s sessions remain", name)
}

func mustAgent(t *testing.T, name string, logf func(string, ...any)) scenario.Harness {
	t.Helper()
	h, err := scenario.Agent(name, scenario.AgentOptions{Logf: logf})
	require.NoError(t, err)
	return h
}

// processesUnder lists the processes whose working directory or
// environment names dir: what a session started there and left running.
func processesUnder(t *testing.T, dir string) []string {
	t.Helper()
	self := os.Getpid()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if strings.HasPrefix(cwd, dir) || bytes.Contains(env, []byte(dir)) {
			cmd, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(cmd), "\x00", " "))
		}
	}
	return out
}

package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/scenario"
)

// TestDemoWithClaude runs `orchestra-tui demo --agent claude --headless
// --fast` end to end: the real Claude Code CLI in every pane against the
// scripted model server, through every beat of the scenario (the research
// brief left unanswered → stuck → resubmitted; an invalid plan refused and
// rewritten; the correction typed into implement attempt 1, whose model
// then stalls until the lease expires; the relaunch, whose brief the proof
// reads from the stub's request log; the fix and the tests run with Bash;
// verify red → green; approval), and the demo's own proofs all hold.
//
// Every beat is kept: each one came out reliable with Claude Code 2.1.332
// (about 30 s on an idle 2-core machine; see the logged wall time).
//
// The demo runs with a HOME and a TMPDIR of its own, so the test can check
// that Claude Code left nothing in the user's home and the demo removed its
// directory.
func TestDemoWithClaude(t *testing.T) {
	parallel(t)
	demoWithClaude(t, claudecli.Require(t))
}

// TestDemoWithOldestClaude is TestDemoWithClaude with the oldest Claude
// Code release the console supports ($ORCHESTRA_CLAUDE_OLDEST_BIN, which
// .ci/install-agents.sh installs). 2.1.197 shows a pasted brief as
// "[Pasted text #1 +81 lines]" and drops a submit key sent with the paste:
// the delivery is confirmed from the screen and the key sent again.
func TestDemoWithOldestClaude(t *testing.T) {
	parallel(t)
	bin := os.Getenv(oldestClaudeEnv)
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal(oldestClaudeEnv + " is not set: .ci/run installs the oldest supported Claude Code (.ci/install-agents.sh)")
		}
		t.Skip(oldestClaudeEnv + " is not set: eval \"$(.ci/install-agents.sh)\" installs the oldest supported Claude Code")
	}
	demoWithClaude(t, bin)
}

// oldestClaudeEnv names the oldest supported Claude Code binary.
const oldestClaudeEnv = "ORCHESTRA_CLAUDE_OLDEST_BIN"

func demoWithClaude(t *testing.T, claude string) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the demo's project tests need the go tool on PATH")
	}
	bin := buildBinary(t, t.TempDir())
	home, tmp := t.TempDir(), t.TempDir()

	// A bound on a run that takes about a minute on a quiet machine: at
	// load 30 the oldest Claude Code's run passed 150 s, where it was
	// killed mid-review.
	ctx, cancel := context.WithTimeout(t.Context(), 6*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "demo", "--agent", "claude", "--headless", "--fast")
	cmd.Env = append(os.Environ(),
		claudecli.BinEnv+"="+claude,
		"HOME="+home, "TMPDIR="+tmp,
		// The user's caches, named outright: the fresh HOME would move
		// them and every test run would build cold.
		"GOCACHE="+goEnv(t, goBin, "GOCACHE"),
		"GOMODCACHE="+goEnv(t, goBin, "GOMODCACHE"),
		"GOPATH="+goEnv(t, goBin, "GOPATH"),
	)
	// A real run is not what this test is for, whatever the caller's
	// environment says.
	cmd.Env = append(cmd.Env, scenario.RealEnv+"=")
	started := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(started)
	t.Logf("demo --agent claude --headless --fast took %v:\n%s", took.Round(100*time.Millisecond), out)
	require.NoError(t, err, "the demo exits 0")

	text := string(out)
	for _, claim := range []string{scenario.ClaimContinuity, scenario.ClaimDirect, scenario.ClaimGate, scenario.ClaimBeats} {
		require.Contains(t, text, "proof: "+claim+" ok\n")
	}
	require.Contains(t, text, "demo: ok, every proof held\n")
	require.NotContains(t, text, "FAILED")
	// A loaded machine may add an attempt (a lease lost to a slow reply),
	// which shifts the sessions' numbers: the beats are matched by what
	// they say, and the correction's session is the one the lease killed.
	for _, beat := range []string{"refusal:artifact-schema", "for phase implement, attempt 2", "Verify gate: ✓ ok", "Approved by " + scenario.OperatorName} {
		require.Contains(t, text, beat)
	}
	require.Regexp(t, `Resubmitted session S\d+ \(brief, by `+regexp.QuoteMeta(scenario.OperatorName)+`\)`, text)
	corrected := regexp.MustCompile(`Decision delivered to session (S\d+)\.`).FindStringSubmatch(text)
	require.NotNil(t, corrected, "the correction was delivered")
	require.Contains(t, text, "Session "+corrected[1]+" was stopped by the engine", "the corrected session lost its lease")
	require.Regexp(t, `pane recordings: \d+, removed with the demo directory`, text)

	// Claude Code kept its state in the demo's own home: nothing of it
	// reached HOME, and the demo directory went with the run.
	for _, name := range []string{".claude", ".claude.json"} {
		_, err := os.Stat(filepath.Join(home, name))
		require.True(t, os.IsNotExist(err), "%s appeared in HOME", name)
	}
	left, err := os.ReadDir(tmp)
	require.NoError(t, err)
	var names []string
	for _, e := range left {
		if strings.HasPrefix(e.Name(), "orchestra-demo-") {
			names = append(names, e.Name())
		}
	}
	require.Empty(t, names, "the demo directory was removed")
}

package scenario

import (
	"bytes"
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
)

// TestMain lets this test binary act as the scripted agent: the
// scenario's harness runs {{self}} agent --script ..., and {{self}} is
// this binary.
func TestMain(m *testing.M) {
	agent.MainIfReexec()
	os.Exit(m.Run())
}

// testHarness is the scripted harness with this test binary as the agent.
func testHarness() Harness {
	h := Scripted()
	tweak := h.Tweak
	h.Tweak = func(cfg *config.Config) {
		tweak(cfg)
		sp := cfg.Harness[h.Name]
		sp.SetEnv = map[string]string{agent.ReexecEnv: "1"}
		cfg.Harness[h.Name] = sp
	}
	return h
}

// run is one headless, fast run of the demo and what it printed.
type run struct {
	out  string
	code int
	dir  string
}

func runDemo(t *testing.T, b Break) run {
	t.Helper()
	s, err := Prepare(Options{Fast: true, Harness: testHarness(), Break: b, TempDir: t.TempDir()})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out bytes.Buffer
	code := RunHeadless(ctx, s, &out)
	require.NoError(t, s.Close())
	return run{out: out.String(), code: code, dir: s.Dir}
}

// The whole demo, twice at once: both runs pass and print the proof lines,
// print exactly the same text, and leave nothing behind.
func TestDemoProvesItselfAndPrintsTheSameTextTwice(t *testing.T) {
	t.Parallel()
	var runs [2]run
	var wg sync.WaitGroup
	for i := range runs {
		wg.Go(func() { runs[i] = runDemo(t, BreakNone) })
	}
	wg.Wait()
	a := runs[0]
	require.Equal(t, 0, a.code, a.out)
	for _, claim := range []string{ClaimContinuity, ClaimDirect, ClaimGate, ClaimBeats} {
		require.Contains(t, a.out, "proof: "+claim+" ok\n")
	}
	require.Contains(t, a.out, "demo: ok, every proof held\n")
	require.NotContains(t, a.out, "FAILED")
	require.Contains(t, a.out, "pane recordings: 6, removed with the demo directory", "the recordings are counted, not listed: they go with the directory")
	require.Equal(t, a.out, runs[1].out, "two runs print the same text")
	for _, r := range runs {
		_, err := os.Stat(r.dir)
		require.True(t, os.IsNotExist(err), "the demo directory %s was removed", r.dir)
	}
}

// Each way of breaking the scenario is caught: FAILED, the broken proof
// named, and a non-zero exit.
func TestDemoFailsWhenAProofBreaks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		brk    Break
		failed []string
	}{
		{BreakContinuity, []string{ClaimContinuity}},
		{BreakFix, []string{ClaimDirect, ClaimGate, ClaimBeats}},
	} {
		t.Run(string(tc.brk), func(t *testing.T) {
			t.Parallel()
			r := runDemo(t, tc.brk)
			require.NotEqual(t, 0, r.code, r.out)
			require.Contains(t, r.out, "\nFAILED: ")
			for _, claim := range tc.failed {
				require.Contains(t, r.out, "proof: "+claim+" FAILED: ", r.out)
			}
			require.NotContains(t, r.out, "demo: ok")
		})
	}
}

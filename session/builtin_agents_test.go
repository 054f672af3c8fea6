package session_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/session"
)

// TestAgentVolatilePatterns: screens each CLI draws while it waits on its
// model (observed with the versions in .ci/install-agents.sh) differ only
// in their spinner and counter, and must fingerprint the same with the
// built-in harness's patterns, or a hung agent keeps its lease for ever. A
// screen with new output must still differ.
func TestAgentVolatilePatterns(t *testing.T) {
	t.Parallel()
	specs := session.DefaultSpecs()
	for _, c := range []struct {
		harness   string
		a, b, new string
	}{
		{"codex",
			"› Fix calc\n\n• Working (12s • esc to interrupt)\n\n› Ask Codex to do anything",
			"› Fix calc\n\n◦ Working (13s • esc to interrupt)\n\n› Ask Codex to do anything",
			"› Fix calc\n\n• Ran go test ./...\n\n› Ask Codex to do anything"},
		{"gemini",
			" > Fix calc\n\n ⠋ Thinking... (esc to cancel, 0s)        ? for shortcuts",
			" > Fix calc\n\n ⠼ Reticulating splines (esc to cancel, 14s)        ? for shortcuts",
			" > Fix calc\n\n✦ Writing the frame artifact.        ? for shortcuts"},
		{"opencode",
			"  ┃  Fix calc\n   ⬝⬝⬝⬝■■■■  esc interrupt      tab agents",
			"  ┃  Fix calc\n   ■■■■⬝⬝⬝⬝  esc interrupt      tab agents",
			"  ┃  Fix calc\n     Writing the frame artifact.\n   ■■■■⬝⬝⬝⬝  esc interrupt      tab agents"},
	} {
		spec, ok := specs[c.harness]
		require.True(t, ok, c.harness)
		re, err := lease.CompileVolatile(spec.Volatile)
		require.NoError(t, err)
		require.Equal(t, lease.ScreenFingerprint(c.a, re), lease.ScreenFingerprint(c.b, re), "%s: a spinner is not progress", c.harness)
		require.NotEqual(t, lease.ScreenFingerprint(c.a, re), lease.ScreenFingerprint(c.new, re), "%s: new output is progress", c.harness)
		require.NotEqual(t, lease.ScreenFingerprint(c.a, nil), lease.ScreenFingerprint(c.b, nil), "%s: without its patterns the screens differ", c.harness)
	}
}

// TestAgentSpecsAreValid: every built-in agent harness passes the checks a
// configured one must pass, and names where its usage is read.
func TestAgentSpecsAreValid(t *testing.T) {
	t.Parallel()
	specs := session.DefaultSpecs()
	for name, usage := range map[string]session.UsageSource{
		"codex": session.UsageCodexRollout, "gemini": session.UsageGeminiChat, "opencode": session.UsageOpenCodeDB,
		"codex-exec": session.UsageCodexRollout, "gemini-print": session.UsageGeminiChat, "opencode-run": session.UsageOpenCodeDB,
	} {
		s := specs[name]
		require.NoError(t, s.Validate(), name)
		require.Equal(t, usage, s.Usage, name)
	}
	require.Contains(t, specs["codex"].Argv, "--no-daemon", "codex must not leave an app-server daemon behind")
}

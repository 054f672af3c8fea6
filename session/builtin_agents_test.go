package session_test

import (
	"regexp"
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

// TestGeminiPendingPattern: Gemini CLI (0.61.0) keeps a submit key that
// arrives with a paste as a newline, so the refusal typed into its pane
// stayed in the input box unsubmitted. Its pending pattern must see any
// text in the input box (a short paste shows as itself), and nothing once
// the box is empty again, whatever its history above shows.
func TestGeminiPendingPattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(session.DefaultSpecs()["gemini"].Pending)
	const (
		rule   = "────────────────────────────────────────\n YOLO Ctrl+Y\n▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄\n"
		footer = "▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀▀\n workspace (/directory)     branch       /model\n .../T1     orchestra/t1    gemini-stub\n\n\n"
		empty  = " *   Type your message or @path/to/file\n"
		done   = "✦ Phase plan is done: .orchestra/plan.json is written.\n\n"
	)
	for _, c := range []struct {
		name    string
		screen  string
		pending bool
	}{
		{"a short paste left in the box, its submit turned into a newline",
			done + rule + " * REFUSED: The artifact does not follow its schema. .orchestra/plan.json: at /: missing\n   property 'steps'. Fix .orchestra/plan.json and then\n   write .orchestra/done again.\n\n" + footer, true},
		{"a long paste's placeholder", "\n Press Ctrl+O to expand pasted text\n\n" + rule + " * [Pasted Text: 147 lines]\n\n" + footer, true},
		{"without --yolo", done + rule + " > Keep the signatures of Add and Mul unchanged.\n" + footer, true},
		{"the box empty while it works", "▄▄▄▄\n > REFUSED: the plan\n▀▀▀▀\n ⠸ Thinking... (esc to cancel, 0s)\n" + rule + empty + footer, false},
		{"the box empty at rest", done + rule + empty + footer, false},
		{"a history line that looks like a bullet", "  * step one\n" + done + rule + empty + footer, false},
	} {
		require.Equal(t, c.pending, re.MatchString(c.screen), c.name)
	}
}

// TestClaudePendingPattern: Claude Code 2.1.197 drops the submit key sent
// with a paste, long or short; a short one (a refusal) stays in the prompt
// box as its text. The pending pattern must see text between the box's
// rules, and neither an empty box, a suggestion in it, nor a message in the
// history above.
func TestClaudePendingPattern(t *testing.T) {
	t.Parallel()
	re := regexp.MustCompile(session.DefaultSpecs()["claude"].Pending)
	const (
		rule   = "──────────────────────────────────────────\n"
		footer = "  ⏵⏵ accept edits on (shift+tab to cycle)\n"
		done   = "● Phase plan is done: .orchestra/plan.json is written.\n\n✻ Baked for 2s\n\n"
	)
	for _, c := range []struct {
		name    string
		screen  string
		pending bool
	}{
		{"a short paste left in the box", done + rule + "❯\u00a0REFUSED: The artifact does not follow its schema. .orchestra/plan.json: at /: missing\n  'steps'. Fix .orchestra/plan.json and then write\n  .orchestra/done again.\n" + rule + footer, true},
		{"a long paste's placeholder", rule + "❯\u00a0[Pasted text #1 +81 lines]\n" + rule + footer, true},
		{"a correction starting with T", rule + "❯\u00a0Tests first, then the fix.\n" + rule + footer, true},
		{"the box empty", done + rule + "❯\u00a0\n" + rule + footer, false},
		{"a suggestion in the empty box", rule + "❯\u00a0Try \"fix the failing test\"\n" + rule + footer, false},
		{"the message in the history, the box empty",
			"❯\u00a0REFUSED: The artifact does not follow its schema.\n  .orchestra/done again.\n\n● Fixing the plan.\n\n" + rule + "❯\u00a0\n" + rule + footer, false},
	} {
		require.Equal(t, c.pending, re.MatchString(c.screen), c.name)
	}
}

// TestClaudeQueuedPattern: while Claude Code works, what is submitted into
// its box joins its queue and the box reads "Press up to edit queued
// messages" (screens from 2.1.332 and 2.1.197): the pending pattern still
// matches that line, the queued pattern says it is input taken. Text in the
// box is not queued.
func TestClaudeQueuedPattern(t *testing.T) {
	t.Parallel()
	spec := session.DefaultSpecs()["claude"]
	pending, queued := regexp.MustCompile(spec.Pending), regexp.MustCompile(spec.Queued)
	const (
		rule   = "──────────────────────────────────────────\n"
		footer = "  ⏵⏵ accept edits on (shift+tab to cycle) · esc to interrupt\n"
	)
	for _, c := range []struct {
		name   string
		screen string
		queued bool
	}{
		{"2.1.332, the correction queued", "❯ HUMAN DECISION (overrides the plan): Keep it.\n  ⎿  Queued · ctrl+x ctrl+s to send now\n\n✢ Undulating…\n\n" +
			rule + "❯\u00a0Press up to edit queued messages\n" + rule + footer, true},
		{"2.1.197, the correction queued", "✻ Photosynthesizing… (9s · ↓ 43 tokens)\n\n\n  ❯ HUMAN DECISION (overrides the plan): Keep it.\n" +
			rule + "❯\u00a0Press up to edit queued messages\n" + rule + footer, true},
		{"2.1.332, the brief taken and refused with a 429", "● API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again\n  later.\n\n" +
			rule + "❯\u00a0Resend your message to try again\n" + rule + "  ⏵⏵ accept edits on (shift+tab to cycle)\n", true},
		{"a correction still in the box", "✢ Undulating…\n\n" + rule + "❯\u00a0HUMAN DECISION (overrides the plan): Keep it.\n" + rule + footer, false},
	} {
		require.True(t, pending.MatchString(c.screen), c.name)
		require.Equal(t, c.queued, queued.MatchString(c.screen), c.name)
	}
}

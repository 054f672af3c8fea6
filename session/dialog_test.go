package session

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// claudeAPIKeyScreen is Claude Code 2.1.332's screen with an
// ANTHROPIC_API_KEY it has not been told to use (captured from tmux).
const claudeAPIKeyScreen = `
────────────────────────────────────────────────────────────────────────────────
  Detected a custom API key in your environment

  ANTHROPIC_API_KEY: sk-ant-...pproved-1111111111BB

  Do you want to use this API key?

    Yes
  ❯ No (recommended)

  Enter to confirm · Esc to cancel
`

func TestClaudeKnowsItsAPIKeyDialogByItsText(t *testing.T) {
	t.Parallel()
	claude := DefaultSpecs()["claude"]
	d, said, ok := claude.DialogOn(claudeAPIKeyScreen)
	require.True(t, ok)
	require.Equal(t, "API key", d.Name)
	require.Equal(t, "Detected a custom API key in your environment ANTHROPIC_API_KEY: sk-ant-...pproved-1111111111BB Do you want to use this API key? Yes ❯ No (recommended) Enter to confirm · Esc to cancel", said)

	_, _, ok = claude.DialogOn("────\n❯ \n────\n")
	require.False(t, ok, "the prompt is no dialog")
	// Its prompt showing, a dialog's words in the history are not one.
	_, _, ok = claude.DialogOn("Detected a custom API key in your environment\n" + "─────\n❯ \n─────\n")
	require.False(t, ok)
	require.NoError(t, claude.Validate())
}

// While a dialog shows, the launch timeout stands still; once it is
// answered the launch confirms.
func TestWaitReadyWaitsOutADialog(t *testing.T) {
	t.Parallel()
	spec := shSpec(`printf 'Do you trust this folder?\n'; read -r answer; printf 'agent> '; exec sleep 100`, `agent>`)
	spec.Dialogs = []Dialog{{Name: "trust", Match: `trust this folder\?`}}
	spec.LaunchTimeout = Duration{300 * time.Millisecond}
	b := setup(t, spec)
	done := make(chan error, 1)
	go func() { done <- b.s.WaitReady(context.Background()) }()
	// Three launch timeouts pass with the dialog up: no refusal.
	select {
	case err := <-done:
		t.Fatalf("WaitReady returned %v while a dialog showed:\n%s", err, b.s.View().Text())
	case <-time.After(time.Second):
	}
	require.NoError(t, b.s.Write([]byte("y\r")))
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(waitLimit):
		t.Fatalf("not confirmed after the dialog was answered:\n%s", b.s.View().Text())
	}
}

// A launch that never confirms says what the screen showed instead.
func TestLaunchNotConfirmedQuotesTheScreen(t *testing.T) {
	t.Parallel()
	spec := shSpec(`printf 'Welcome\n\nPick a colour:\n  > red\n'; exec sleep 100`, `agent>`)
	spec.LaunchTimeout = Duration{300 * time.Millisecond}
	b := setup(t, spec)
	err := b.s.WaitReady(context.Background())
	var r *task.Refusal
	require.True(t, errors.As(err, &r), "want a refusal, got %v", err)
	require.Equal(t, task.ReasonLaunchNotConfirmed, r.Reason)
	require.Contains(t, r.Detail, "The screen showed:\n  Welcome\n  Pick a colour:\n    > red")
}

package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The limit screens the built-in harnesses were measured on against the
// stub's provider-shaped answers: each is recognised with its kind, its
// text, and the reset where the CLI names one.
func TestBuiltinHarnessesKnowTheirLimitScreens(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 5, 11, 32, 0, time.UTC)
	specs := DefaultSpecs()
	for _, c := range []struct {
		harness, screen string
		kind            LimitKind
		text            string
		reset           time.Time
		retrying        bool
	}{
		{"claude", "  Read 1 file\n\n● API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again\n  later.\n\n" +
			"────\n❯ Resend your message to try again\n────\n", LimitRate,
			"● API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later", time.Time{}, false},
		{"claude", "● API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it\n  persists, check your inference gateway (127.0.0.1:35217).\n",
			LimitOverloaded, "● API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:35217)", time.Time{}, false},
		{"codex", "• Explored\n\n■ You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/\nusage to purchase more credits or try again at 5:13 AM.\n\n\n› Ask Codex to do anything\n",
			LimitUsage, "You’ve hit your usage limit. Upgrade to Pro (https://chatgpt.com/explore/pro), visit https://chatgpt.com/settings/ usage to purchase more credits or try again at 5:13 AM",
			time.Date(2026, 12, 2, 5, 14, 0, 0, time.UTC), false},
		{"gemini", "╭────╮\n│                        │\n│ Usage limit reached for gemini-stub.            │\n│ /stats model for usage details     │\n│ /model to switch models.   │\n│ ● 1. Keep trying │\n",
			LimitUsage, "Usage limit reached for gemini-stub. /stats model for usage details /model to switch models", time.Time{}, false},
		// Claude Code waits for a reset a minute ahead by itself.
		{"claude", "❯ say hello\n✻ 5-hour limit reached · retrying in 1m 3s (5:12am) · attempt 1/10\n────\n❯ \n────\n",
			LimitUsage, "✻ 5-hour limit reached · retrying in 1m 3s (5:12am) · attempt 1/10 ❯", time.Date(2026, 12, 2, 5, 13, 0, 0, time.UTC), true},
		// opencode retries by itself and says so in its status line.
		{"opencode", "  ┃  Build · stub model orchestra model stub\n  ╹▀▀▀▀▀▀▀▀\n   ■■⬝⬝⬝⬝⬝⬝ Rate limit reached for requests. Please try again in 87s. [retrying in 1m 22s attempt #1]    esc interrupt\n",
			LimitRate, "Rate limit reached for requests. Please try again in 87s. [retrying in 1m 22s attempt #1] esc interrupt", now.Add(87 * time.Second), true},
		{"opencode", "  ╹▀▀▀▀\n   ■You■exceeded your current quota, please check your plan and billing details. For… (click to expand) [retrying in 4s\n    #4]\n",
			LimitUsage, "You■exceeded your current quota, please check your plan and billing details. For… (click to expand) [retrying in 4s #4]",
			time.Time{}, true},
		{"opencode-run", "Error: Quota exceeded. Check your plan and billing details.\n",
			LimitUsage, "Error: Quota exceeded. Check your plan and billing details", time.Time{}, false},
	} {
		l, n, ok := specs[c.harness].LimitOn(c.screen, now)
		require.True(t, ok, "%s: %q", c.harness, c.screen)
		require.Equal(t, 1, n)
		require.Equal(t, c.kind, l.Kind, c.harness)
		require.Equal(t, c.text, l.Text, c.harness)
		require.Equal(t, c.reset, l.Reset, c.harness)
		require.Equal(t, c.retrying, l.Retrying, c.harness)
	}
	_, n, ok := specs["claude"].LimitOn("────\n❯ \n────\n", now)
	require.False(t, ok)
	require.Zero(t, n)
}

// A reset is read as a delay, a clock time (the end of its minute, the
// next such time after now) or a Unix time.
func TestResetIn(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 2, 15, 30, 10, 0, time.UTC)
	for msg, want := range map[string]time.Time{
		"Rate limit reached. Please try again in 1m30s.":   now.Add(90 * time.Second),
		"retry after 20 seconds":                           now.Add(20 * time.Second),
		"try again at 3:31 PM.":                            time.Date(2026, 12, 2, 15, 32, 0, 0, time.UTC),
		"try again at 3:30 PM.":                            time.Date(2026, 12, 2, 15, 31, 0, 0, time.UTC),
		"usage limit reached · resets 3pm":                 time.Date(2026, 12, 3, 15, 0, 0, 0, time.UTC),
		"usage limit reached · resets 5pm":                 time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC),
		"limit reached, resets at 09:00:00":                time.Date(2026, 12, 3, 9, 0, 0, 0, time.UTC),
		"Claude AI usage limit reached|1796230800":         time.Unix(1796230800, 0),
		"This request would exceed your rate limit later.": {},
	} {
		require.Equal(t, want, ResetIn(msg, now), msg)
	}
}

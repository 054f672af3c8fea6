package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
)

func TestNoFileGivesDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := Load(t.TempDir())
	require.NoError(t, err)
	require.Equal(t, 20*time.Minute, cfg.Lease.Length.Duration)
	require.Contains(t, cfg.Harness, "scripted")
	require.Contains(t, cfg.Harness, "claude")
	require.Contains(t, cfg.Harness, "shell")
	require.Contains(t, cfg.Harness, "claude-print")
	require.Len(t, cfg.EffectiveSlots(), len(cfg.Harness), "one slot per harness")
}

func TestNewHarnessNeedsConfigOnly(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := `
[lease]
length = "90s"
window = "30s"

[harness.aider]
argv = ["aider", "--model", "{{model}}"]
ready = "^> "
delivery = "type"
submit = "\\r"
quiet = "1s"
launch_timeout = "20s"

[harness.claude]
quiet = "3s"

[[slots]]
name = "fast"
harness = "aider"
capacity = 2
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, FileName), []byte(text), 0o644))
	cfg, err := Load(dir)
	require.NoError(t, err)
	require.Equal(t, 90*time.Second, cfg.Lease.Length.Duration)
	require.Equal(t, []string{"aider", "--model", "{{model}}"}, cfg.Harness["aider"].Argv)
	require.Equal(t, "aider", cfg.Harness["aider"].Name)
	// Overriding one field of a built-in harness keeps the rest.
	require.Equal(t, 3*time.Second, cfg.Harness["claude"].Quiet.Duration)
	require.Equal(t, "claude", cfg.Harness["claude"].Argv[0])
	require.Equal(t, session.UsageClaudeTranscript, cfg.Harness["claude"].Usage)
	require.Equal(t, []Slot{{Name: "fast", Harness: "aider", Capacity: 2}}, cfg.EffectiveSlots())
}

func TestBadConfigNamesTheKey(t *testing.T) {
	t.Parallel()
	_, err := Parse("orchestra.toml", "[lease]\nlenght = \"5m\"\n")
	require.ErrorContains(t, err, "unknown keys: lease.lenght")

	_, err = Parse("orchestra.toml", "[harness.x]\nargv = []\n")
	require.ErrorContains(t, err, `orchestra.toml: harness "x": argv: is empty`)

	// Every problem is its own line, and every line names the file.
	_, err = Parse("orchestra.toml", "[harness.x]\nargv = [\"sh\"]\nready = \"([\"\nresubmit = \"never\"\n")
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 2, err.Error())
	for _, l := range lines {
		require.True(t, strings.HasPrefix(l, `orchestra.toml: harness "x": `), l)
	}

	_, err = Parse("orchestra.toml", "[[slots]]\nharness = \"nope\"\n")
	require.ErrorContains(t, err, `unknown harness "nope"`)

	_, err = Parse("orchestra.toml", "[lease]\nlength = \"soon\"\n")
	require.ErrorContains(t, err, "soon")
}

func TestForkPolicyDefaultsAndOverrides(t *testing.T) {
	t.Parallel()
	cfg := Default()
	require.Equal(t, 5*time.Minute, cfg.Fork.CacheLifetime.Duration)
	require.Equal(t, 15*time.Minute, cfg.Fork.ExpectedGap.Duration)
	require.Equal(t, 30*time.Second, cfg.Fork.PingLead.Duration)

	// A plan with the one-hour cache changes one key; the rest keep their defaults.
	cfg, err := Parse("orchestra.toml", "[fork]\ncache_lifetime = \"1h\"\n")
	require.NoError(t, err)
	require.Equal(t, time.Hour, cfg.Fork.CacheLifetime.Duration)
	require.Equal(t, 30*time.Second, cfg.Fork.PingLead.Duration)

	_, err = Parse("orchestra.toml", "[fork]\ncache_lifetime = \"20s\"\n")
	require.ErrorContains(t, err, "fork.ping_lead")
	_, err = Parse("orchestra.toml", "[fork]\ncache_lifetime = \"0s\"\n")
	require.ErrorContains(t, err, "fork.cache_lifetime must be positive")
}

// The verify gate runs while the task holds no live session and no lease
// clock; only its timeout ends a test suite that hangs. A zero timeout
// (which verify reads as none) would let one hung gate hold its task for
// ever, so it is refused with the key named.
func TestVerifyTimeoutMustBePositive(t *testing.T) {
	t.Parallel()
	_, err := Parse("orchestra.toml", "[verify]\ntimeout = \"0s\"\n")
	require.ErrorContains(t, err, "verify.timeout must be positive")
	cfg, err := Parse("orchestra.toml", "[verify]\ntimeout = \"30m\"\n")
	require.NoError(t, err)
	require.Equal(t, 30*time.Minute, cfg.Verify.Timeout.Duration)
}

// The README's first recipe for a new harness gives only argv and ready:
// that must be a working configuration, whose session finds its program on
// PATH (an empty env once gave it an empty PATH) and draws in true colour.
func TestNewHarnessNeedsOnlyArgvAndReady(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("orchestra.toml", `
[harness.aider]
argv = ["aider", "--model", "{{model}}"]
ready = '(?m)^>'       # regex on the screen: the program is ready for input
`)
	require.NoError(t, err)
	h := cfg.Harness["aider"]
	require.Equal(t, session.DeliveryType, h.Delivery)
	env := session.ScrubEnv([]string{"PATH=/usr/local/bin:/usr/bin", "HOME=/home/a", "OPENAI_API_KEY=s3cr3t"}, h)
	require.Contains(t, env, "PATH=/usr/local/bin:/usr/bin")
	require.Contains(t, env, "COLORTERM=truecolor")
	require.NotContains(t, strings.Join(env, "\n"), "s3cr3t")
	require.Equal(t, "orchestra.toml", cfg.HarnessSource("aider"))
	require.Equal(t, "built in", cfg.HarnessSource("claude"))
}

package session

import (
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"
)

func TestSpecLoadsFromTOML(t *testing.T) {
	t.Parallel()
	const doc = `
[harness.codex]
argv = ["codex", "--model", "{{model}}"]
env = ["PATH", "HOME", "OPENAI_API_KEY"]
set_env = { NO_COLOR = "1" }
delivery = "type"
ready = '(?m)^>\s*$'
submit = '\r'
quiet = "750ms"
launch_timeout = "45s"
resubmit = "last-input"
volatile = ['\d+s elapsed']
capabilities = ["code", "review"]
capacity = 2
`
	var cfg struct {
		Harness map[string]Spec `toml:"harness"`
	}
	_, err := toml.Decode(doc, &cfg)
	require.NoError(t, err)
	s := cfg.Harness["codex"]
	s.Name = "codex"
	require.NoError(t, s.Validate())
	require.Equal(t, []string{"codex", "--model", "{{model}}"}, s.Argv)
	require.Equal(t, "1", s.SetEnv["NO_COLOR"])
	require.Equal(t, 750*time.Millisecond, s.Quiet.Duration)
	require.Equal(t, 45*time.Second, s.LaunchTimeout.Duration)
	require.Equal(t, ResubmitLastInput, s.Resubmit)
	require.Equal(t, 2, s.Capacity)
	sub, err := s.SubmitBytes()
	require.NoError(t, err)
	require.Equal(t, []byte("\r"), sub)
	require.Equal(t, []string{"codex", "--model", "opus"}, s.Expand(map[string]string{"model": "opus"}).Argv)
	require.Equal(t, "{{model}}", s.Argv[2], "Expand must not change the original")
}

func TestSpecRejectsBadDuration(t *testing.T) {
	t.Parallel()
	var cfg struct {
		Harness map[string]Spec `toml:"harness"`
	}
	_, err := toml.Decode("[harness.x]\nquiet = \"soon\"\n", &cfg)
	require.ErrorContains(t, err, `duration "soon"`)
}

func TestDefaultSpecsAreValid(t *testing.T) {
	t.Parallel()
	specs := DefaultSpecs()
	for _, name := range []string{"scripted", "claude", "claude-print", "shell"} {
		s, ok := specs[name]
		require.True(t, ok, name)
		require.Equal(t, name, s.Name)
		require.NoError(t, s.Validate())
	}
	claude := specs["claude"].Expand(map[string]string{"model": "sonnet"})
	require.Equal(t, []string{"claude", "--model", "sonnet", "--allowedTools", "Bash", "Edit", "Write", "Read"}, claude.Argv)
	scripted := specs["scripted"].Expand(map[string]string{"self": "/bin/orch", "script": "s.txt"})
	require.Equal(t, []string{"/bin/orch", "agent", "--script", "s.txt"}, scripted.Argv)
	require.Regexp(t, specs["scripted"].Ready, "scripted-agent ❯")
	require.Regexp(t, specs["claude"].Ready, "──────\n❯ \n──────")
	// A dialog's selected line is not the prompt.
	require.NotRegexp(t, specs["claude"].Ready, " Do you trust the files in this folder?\n\n ❯ 1. Yes, proceed\n   2. No, exit\n")
	require.NotRegexp(t, specs["claude"].Ready, "❯ No, exit")
}

func TestValidateNamesHarnessAndField(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		edit func(*Spec)
		want string
	}{
		"empty argv":     {func(s *Spec) { s.Argv = nil }, `harness "bad": argv: is empty`},
		"bad ready":      {func(s *Spec) { s.Ready = "(" }, `harness "bad": ready: bad regular expression`},
		"empty ready":    {func(s *Spec) { s.Ready, s.Delivery = "", DeliveryType }, `harness "bad": ready: is empty`},
		"bad volatile":   {func(s *Spec) { s.Volatile = []string{"ok", "[z-a]"} }, `harness "bad": volatile[1]: bad regular expression`},
		"bad delivery":   {func(s *Spec) { s.Delivery = "carrier-pigeon" }, `harness "bad": delivery: unknown value "carrier-pigeon"`},
		"no delivery":    {func(s *Spec) { s.Delivery = "" }, `harness "bad": delivery: is empty`},
		"bad resubmit":   {func(s *Spec) { s.Resubmit = "shout" }, `harness "bad": resubmit: unknown value "shout"`},
		"bad submit":     {func(s *Spec) { s.Submit = `\q` }, `harness "bad": submit:`},
		"negative quiet": {func(s *Spec) { s.Quiet = Duration{-time.Second} }, `harness "bad": quiet: is negative`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := DefaultSpecs()["shell"]
			s.Name = "bad"
			c.edit(&s)
			require.ErrorContains(t, s.Validate(), c.want)
		})
	}
}

func TestScrubEnv(t *testing.T) {
	t.Parallel()
	spec := Spec{
		Env:    []string{"PATH", "HOME", "ANTHROPIC_API_KEY", "LC_*", "CLAUDECODE_NOT"},
		SetEnv: map[string]string{"DISABLE_TELEMETRY": "1"},
	}
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/a", "HOME=/home/b", "TERM=screen", "ANTHROPIC_API_KEY=named-so-kept",
		"MY_API_KEY=s3cr3t", "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "LC_ALL=C.UTF-8",
		"LC_SECRET_TOKEN=pattern-does-not-pass-secrets", "GITHUB_TOKEN=x", "malformed",
	}
	require.Equal(t, []string{
		"ANTHROPIC_API_KEY=named-so-kept", "COLORTERM=truecolor", "DISABLE_TELEMETRY=1", "HOME=/home/b", "LC_ALL=C.UTF-8",
		"PATH=/usr/bin", "TERM=xterm-256color",
	}, ScrubEnv(environ, spec))

	spec.Env = append(spec.Env, "CLAUDECODE")
	require.Contains(t, ScrubEnv(environ, spec), "CLAUDECODE=1", "named exactly, a marker is passed on")
}

// A harness that names no env gets the documented default allow-list: a
// recipe with argv and ready alone must find its program on PATH, and
// still no secret passes.
func TestScrubEnvDefaultAllowList(t *testing.T) {
	t.Parallel()
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/a", "USER=a", "LANG=C.UTF-8", "LC_CTYPE=C.UTF-8", "TMPDIR=/tmp/a",
		"SHELL=/bin/bash", "COLORTERM=24bit", "OPENAI_API_KEY=s3cr3t", "LC_SECRET_TOKEN=x", "EDITOR=vi", "CLAUDECODE=1",
	}
	got := ScrubEnv(environ, Spec{SetEnv: map[string]string{"OWN": "1"}})
	require.Equal(t, []string{
		"COLORTERM=truecolor", "HOME=/home/a", "LANG=C.UTF-8", "LC_CTYPE=C.UTF-8", "OWN=1", "PATH=/usr/bin",
		"SHELL=/bin/bash", "TERM=xterm-256color", "TMPDIR=/tmp/a", "USER=a",
	}, got)
	// A spec may still choose its own colour variable.
	require.Contains(t, ScrubEnv(environ, Spec{SetEnv: map[string]string{"COLORTERM": "256"}}), "COLORTERM=256")
}

// Every built-in harness passes the default allow-list on, plus its own.
func TestBuiltinsExtendTheDefaultEnv(t *testing.T) {
	t.Parallel()
	for name, s := range DefaultSpecs() {
		if name == "scripted" {
			continue // the demo agent keeps its own short list
		}
		for _, v := range DefaultEnv {
			require.Contains(t, s.Env, v, "harness %s", name)
		}
	}
	require.Contains(t, DefaultSpecs()["claude"].Env, "ANTHROPIC_BASE_URL")
	// DefaultSpecs hands out copies.
	a := DefaultSpecs()["claude"]
	a.Env[0] = "CHANGED"
	require.NotEqual(t, "CHANGED", DefaultSpecs()["claude"].Env[0])
}

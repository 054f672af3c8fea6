package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseFlagsReadsClaudeFlags(t *testing.T) {
	t.Parallel()
	f := parseFlags([]string{"--model", "claude-x", "--allowedTools", "Bash", "Edit,Write", "--permission-mode=acceptEdits", "--agent", "reviewer", "-p"})
	require.Equal(t, "claude-x", f.model)
	require.Equal(t, "acceptEdits", f.permissionMode)
	require.Equal(t, "reviewer", f.agent)
	require.Equal(t, []string{"Bash", "Edit", "Write"}, f.allowedTools)

	f = parseFlags([]string{"--dangerously-skip-permissions", "--allowed-tools=Read Bash(git:*)"})
	require.Equal(t, "bypassPermissions", f.permissionMode)
	require.Equal(t, []string{"Read", "Bash(git:*)"}, f.allowedTools)
	require.Empty(t, f.model)
}

// fakeAgent writes an executable that answers --version and counts how
// often it was asked, one line per probe in count.
func fakeAgent(t *testing.T) (bin, count string) {
	t.Helper()
	dir := t.TempDir()
	bin, count = filepath.Join(dir, "fake-agent"), filepath.Join(dir, "count")
	script := "#!/bin/sh\nif [ \"$1\" = --version ]; then echo probe >> " + count + "; echo 'fake-agent 1.2.3'; exit 0; fi\nexec /bin/sh\n"
	require.NoError(t, os.WriteFile(bin, []byte(script), 0o755))
	return bin, count
}

func TestLaunchFingerprint(t *testing.T) {
	t.Parallel()
	bin, count := fakeAgent(t)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("# Rules\n"), 0o644))
	spec := Spec{
		Name: "fake", Argv: []string{bin, "--model", "m-1", "--allowedTools", "Bash", "Write"},
		Env: []string{"PATH", "HOME", "MY_*"}, SetEnv: map[string]string{"ANTHROPIC_API_KEY": "sk-named-by-spec"},
		Delivery: DeliveryType, Ready: "[$#]",
	}
	p := Params{Spec: spec, Dir: dir, Cols: 100, Rows: 30, Environ: []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/nowhere", "MY_SECRET_TOKEN=s3cr3t", "MY_COLOUR=blue", "CLAUDECODE=1",
	}}
	ctx := context.Background()
	l, err := NewLaunch(ctx, p, "task-model")
	require.NoError(t, err)
	require.Equal(t, bin, l.Binary)
	require.Equal(t, "fake-agent 1.2.3", l.Version)
	require.Equal(t, "m-1", l.Model, "argv's --model wins over the task's")
	require.Equal(t, []string{"Bash", "Write"}, l.AllowedTools)
	require.Equal(t, dir, l.Dir)
	require.True(t, strings.HasPrefix(l.AgentFile, "AGENTS.md:"), l.AgentFile)
	require.Equal(t, []string{"ANTHROPIC_API_KEY", "COLORTERM", "HOME", "MY_COLOUR", "PATH", "TERM"}, l.EnvNames)
	require.Len(t, l.Hash, 64)
	js := l.JSON()
	for _, value := range []string{"s3cr3t", "sk-named-by-spec", "blue", "/nowhere"} {
		require.NotContains(t, js, value, "the fingerprint holds names, never values")
	}
	back, err := ParseLaunch(js)
	require.NoError(t, err)
	require.Equal(t, l, back)

	// The same launch hashes alike, and probes the version once.
	again, err := NewLaunch(ctx, p, "task-model")
	require.NoError(t, err)
	require.Equal(t, l.Hash, again.Hash)
	probes, err := os.ReadFile(count)
	require.NoError(t, err)
	require.Equal(t, "probe\n", string(probes), "the version is probed once per binary")

	// Any difference in how it is launched is a different fingerprint.
	for name, mod := range map[string]func(*Params){
		"size":  func(p *Params) { p.Cols = 120 },
		"flag":  func(p *Params) { p.Spec.Argv = append(p.Spec.Argv, "--permission-mode", "plan") },
		"env":   func(p *Params) { p.Environ = append(p.Environ, "MY_OTHER=1") },
		"agent": func(p *Params) { p.Spec.Argv = append(p.Spec.Argv, "--agent", "x") },
	} {
		q := p
		q.Spec.Argv = append([]string(nil), p.Spec.Argv...)
		q.Environ = append([]string(nil), p.Environ...)
		mod(&q)
		other, err := NewLaunch(ctx, q, "task-model")
		require.NoError(t, err)
		require.NotEqual(t, l.Hash, other.Hash, name)
	}
}

// TestSecretNeverReachesSession runs a real shell session from a console
// environment holding a secret and the markers of a parent agent host, and
// reads the environment from inside it.
func TestSecretNeverReachesSession(t *testing.T) {
	t.Parallel()
	spec := DefaultSpecs()["shell"]
	spec.Delivery = DeliveryType // this test types commands on purpose
	// A prefix pattern that would match the secret's name must not let it
	// through either.
	spec.Env = append(spec.Env, "MY_*", "CLAUDE*")
	environ := append(os.Environ(), "MY_SECRET_TOKEN=s3cr3t", "MY_COLOUR=blue",
		"CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli", "GITHUB_TOKEN=ghp_s3cr3t")
	b := setup(t, spec, func(p *Params) { p.Environ = environ })
	require.NoError(t, b.s.WaitReady(context.Background()))
	dir := filepath.Dir(filepath.Dir(b.cast))
	out := filepath.Join(dir, "env.txt")
	require.NoError(t, b.s.Deliver("env > "+out+"; echo ENV-$((6*7))"))
	waitText(t, b.s, "ENV-42")

	data, err := os.ReadFile(out)
	require.NoError(t, err)
	env := string(data)
	require.Contains(t, env, "MY_COLOUR=blue", "the pattern lets ordinary variables through")
	require.Contains(t, env, "COLORTERM=truecolor", "the pane's emulator draws true colour")
	require.NotContains(t, env, "s3cr3t")
	for _, name := range []string{"MY_SECRET_TOKEN=", "GITHUB_TOKEN=", "CLAUDECODE=", "CLAUDE_CODE_ENTRYPOINT="} {
		require.NotContains(t, env, "\n"+name)
		require.False(t, strings.HasPrefix(env, name))
	}

	l, err := NewLaunch(context.Background(), Params{Spec: spec, Dir: dir, Cols: 80, Rows: 24, Environ: environ}, "")
	require.NoError(t, err)
	require.Contains(t, l.EnvNames, "MY_COLOUR")
	require.NotContains(t, l.EnvNames, "MY_SECRET_TOKEN")
	require.NotContains(t, l.EnvNames, "CLAUDECODE")
	require.NotContains(t, l.JSON(), "s3cr3t")
	require.NotContains(t, l.JSON(), "blue")
}

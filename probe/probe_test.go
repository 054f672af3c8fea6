package probe

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// ticker is a harness whose program shows a prompt, sits still long enough
// to settle, then draws a ticking "• Working (Ns)" line with a blinking
// bullet, as Codex does while it works.
func ticker(volatile ...string) session.Spec {
	script := `printf 'ready> '; sleep 1; i=0; b='•'
while :; do i=$((i+1)); printf '\0337\033[3;1H%s Working (%ds)\0338' "$b" "$i"
if [ "$b" = '•' ]; then b='◦'; else b='•'; fi; sleep 0.2; done`
	return session.Spec{
		Name: "ticker", Argv: []string{"/bin/sh", "-c", script}, Delivery: session.DeliveryType,
		Ready: `ready>`, Quiet: session.Duration{Duration: 100 * time.Millisecond},
		LaunchTimeout: session.Duration{Duration: 20 * time.Second}, Volatile: volatile,
	}
}

func find(t *testing.T, rep Report, name string) Check {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no %q check in %+v", name, rep)
	return Check{}
}

// A ticking counter and a blinking bullet seen while idle are reported,
// with a pattern that masks both.
func TestIdleChangesGetASuggestedPattern(t *testing.T) {
	t.Parallel()
	rep, err := Run(context.Background(), Params{Spec: ticker(), Dir: t.TempDir(), Idle: 2 * time.Second})
	require.NoError(t, err)
	require.Equal(t, OK, find(t, rep, "ready").Status)
	idle := find(t, rep, "idle")
	require.Equal(t, Warn, idle.Status, "%+v", rep)
	require.Len(t, idle.Suggest, 1)
	require.Equal(t, `volatile = ['[•◦] Working \(\d+s\)']`, idle.Suggest[0])
	require.True(t, rep.Green(), "a warning is not a failure")

	// With that pattern the same program idles clean.
	rep, err = Run(context.Background(), Params{Spec: ticker(`[•◦] Working \(\d+s\)`), Dir: t.TempDir(), Idle: 2 * time.Second})
	require.NoError(t, err)
	require.Equal(t, OK, find(t, rep, "idle").Status, "%+v", rep)
}

// A binary that is not there fails the check and says where it looked.
func TestMissingBinaryFails(t *testing.T) {
	t.Parallel()
	spec := ticker()
	spec.Argv = []string{"no-such-agent-cli"}
	rep, err := Run(context.Background(), Params{Spec: spec, Dir: t.TempDir(), Environ: []string{"PATH=/usr/bin:/bin"}})
	require.NoError(t, err)
	require.False(t, rep.Green())
	c := find(t, rep, "binary")
	require.Equal(t, Fail, c.Status)
	require.Contains(t, c.Text, `"no-such-agent-cli" not found in the session's PATH "/usr/bin:/bin"`)
}

// A ready marker that never shows fails with the screen it saw.
func TestReadyNeverMatchingFails(t *testing.T) {
	t.Parallel()
	spec := ticker()
	spec.Argv = []string{"/bin/sh", "-c", "echo hello; sleep 30"}
	spec.LaunchTimeout = session.Duration{Duration: time.Second}
	rep, err := Run(context.Background(), Params{Spec: spec, Dir: t.TempDir()})
	require.NoError(t, err)
	require.False(t, rep.Green())
	c := find(t, rep, "ready")
	require.Equal(t, Fail, c.Status)
	require.Contains(t, c.Text, `"hello"`)
}

// The built-in shell harness is green and is never typed into; the
// scripted agent echoes what is typed and takes the submit key.
func TestBuiltinsAreGreen(t *testing.T) {
	t.Parallel()
	rep, err := Run(context.Background(), Params{Spec: session.DefaultSpecs()["shell"], Dir: t.TempDir(), Idle: 500 * time.Millisecond})
	require.NoError(t, err)
	require.True(t, rep.Green(), "%+v", rep)
	require.Equal(t, Skip, find(t, rep, "submit").Status)

	// A program that echoes typed text and reacts to the submit key.
	spec := session.Spec{
		Name: "echo", Argv: []string{"/bin/sh", "-c", `printf 'ready> '; read line; echo "got: $line"; sleep 30`},
		Delivery: session.DeliveryType, Ready: `ready>`, Submit: `\r`, Quiet: session.Duration{Duration: 100 * time.Millisecond},
	}
	rep, err = Run(context.Background(), Params{Spec: spec, Dir: t.TempDir(), Idle: 500 * time.Millisecond})
	require.NoError(t, err)
	require.True(t, rep.Green(), "%+v", rep)
	require.Equal(t, OK, find(t, rep, "echo").Status, "%+v", rep)
	require.Equal(t, OK, find(t, rep, "submit").Status, "%+v", rep)
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	require.Equal(t, `[•◦] Working \(\d+s\)`, Suggest([]string{"• Working (12s)", "◦ Working (13s)"}))
	require.Equal(t, `Elapsed \d+:\d+`, Suggest([]string{"Elapsed 0:09", "Elapsed 0:10"}))
	require.Equal(t, `✻ Thinking… \(\d+s\)`, Suggest([]string{"✻ Thinking… (3s)"}))
}

// A line that changes once after the screen settled (a late warning in a
// footer, a welcome animation that ends) is not what keeps a hung
// session's lease: the idle check watches again and stays green.
func TestOneChangeWhileIdleIsNotAWarning(t *testing.T) {
	t.Parallel()
	script := `printf 'ready> '; sleep 1; printf '\0337\033[3;1H! 1 warning\0338'; exec sleep 600`
	spec := session.Spec{
		Name: "late", Argv: []string{"/bin/sh", "-c", script}, Delivery: session.DeliveryType,
		Ready: `ready>`, Quiet: session.Duration{Duration: 100 * time.Millisecond},
		LaunchTimeout: session.Duration{Duration: 20 * time.Second},
	}
	rep, err := Run(context.Background(), Params{Spec: spec, Dir: t.TempDir(), Idle: 2 * time.Second})
	require.NoError(t, err)
	idle := find(t, rep, "idle")
	require.Equal(t, OK, idle.Status, "%+v", rep)
	require.Empty(t, idle.Suggest)
}

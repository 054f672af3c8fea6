package session

import (
	"context"
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/stretchr/testify/require"
)

func TestWaitReadyConfirmsOnMarker(t *testing.T) {
	t.Parallel()
	b := setup(t, shSpec(`printf 'booting\r\nagent> '; exec cat`, `(?m)agent>$`))
	require.NoError(t, b.s.WaitReady(context.Background()))
	require.Contains(t, b.s.View().Text(), "agent>")
}

func TestWaitReadyWaitsForRedrawsToStop(t *testing.T) {
	t.Parallel()
	// The marker appears first, then the program keeps redrawing a counter;
	// the launch is confirmed only once the counter stops and the screen has
	// been quiet for the quiet period.
	script := `printf 'agent>\r\n'; i=1; while [ $i -le 10 ]; do printf '\rcount %d ' $i; sleep 0.05; i=$((i+1)); done; exec cat`
	spec := shSpec(script, `agent>`)
	spec.Quiet = Duration{400 * time.Millisecond}
	b := setup(t, spec)
	require.NoError(t, b.s.WaitReady(context.Background()))
	require.Contains(t, b.s.View().Text(), "count 10")
}

func TestWaitReadyTimesOutWithRefusal(t *testing.T) {
	t.Parallel()
	spec := shSpec(`printf 'no prompt here'; exec sleep 100`, `agent>`)
	spec.LaunchTimeout = Duration{300 * time.Millisecond}
	b := setup(t, spec)
	err := b.s.WaitReady(context.Background())
	var r *task.Refusal
	require.True(t, errors.As(err, &r), "want a refusal, got %v", err)
	require.Equal(t, task.ReasonLaunchNotConfirmed, r.Reason)
	require.Contains(t, r.Error(), "never appeared")
}

func TestWaitReadyRefusesWhenProgramExits(t *testing.T) {
	t.Parallel()
	b := setup(t, shSpec(`printf 'crashed'; exit 3`, `agent>`))
	err := b.s.WaitReady(context.Background())
	var r *task.Refusal
	require.True(t, errors.As(err, &r), "want a refusal, got %v", err)
	require.Equal(t, task.ReasonSessionExited, r.Reason)
	waitDone(t, b.s)
	require.Equal(t, 3, b.s.ExitCode())
}

func TestWaitReadyIgnoresVolatileRegions(t *testing.T) {
	t.Parallel()
	// A spinner that never stops would keep the screen changing forever;
	// declared volatile, it does not hold back the confirmation.
	script := `printf 'agent>\r\n'; while :; do for c in a b c d; do printf '\rspin[%s]' $c; sleep 0.03; done; done`
	spec := shSpec(script, `agent>`)
	spec.Volatile = []string{`spin\[.\]`}
	b := setup(t, spec)
	require.NoError(t, b.s.WaitReady(context.Background()))
}

func TestStopKillsWholeProcessGroup(t *testing.T) {
	t.Parallel()
	b := setup(t, shSpec(`sleep 100 & printf 'started'; sleep 100`, `started`))
	waitText(t, b.s, "started")
	pgid := b.s.Pid()
	require.NoError(t, syscall.Kill(-pgid, 0), "process group should exist while running")
	require.NoError(t, b.s.Stop(2*time.Second))
	require.ErrorIs(t, syscall.Kill(-pgid, 0), syscall.ESRCH, "a member of the process group survived Stop")
	require.Equal(t, 128+int(syscall.SIGHUP), b.s.ExitCode(), "the group gets SIGHUP first, as from a closing terminal")
}

// An interactive shell ignores SIGTERM; the SIGHUP before it ends the
// shell at once instead of after the grace.
func TestStopEndsInteractiveShellPolitely(t *testing.T) {
	t.Parallel()
	spec := shSpec(`exec /bin/sh -i`, `(?m)[$#] ?$`)
	spec.SetEnv = map[string]string{"PS1": "$ "}
	b := setup(t, spec)
	require.NoError(t, b.s.WaitReady(context.Background()))
	require.NoError(t, b.s.Stop(time.Minute))
	require.Equal(t, 128+int(syscall.SIGHUP), b.s.ExitCode())
}

func TestStopEscalatesToKill(t *testing.T) {
	t.Parallel()
	b := setup(t, shSpec(`trap '' HUP TERM; printf 'stubborn'; while :; do sleep 1; done`, `stubborn`))
	waitText(t, b.s, "stubborn")
	pgid := b.s.Pid()
	require.NoError(t, b.s.Stop(200*time.Millisecond))
	require.ErrorIs(t, syscall.Kill(-pgid, 0), syscall.ESRCH)
	require.Equal(t, 128+int(syscall.SIGKILL), b.s.ExitCode())
}

func TestEnvironmentIsScrubbed(t *testing.T) {
	t.Parallel()
	spec := shSpec(`env; printf 'END\n'`, `END`)
	spec.Env = append(spec.Env, "KEEP_ME")
	b := setup(t, spec, func(p *Params) {
		p.Environ = append(p.Environ, "MY_API_KEY=s3cr3t", "CLAUDECODE=1", "KEEP_ME=visible", "OTHER=dropped")
		p.Cols = 200
	})
	waitDone(t, b.s)
	screen := b.s.View().Text()
	require.Contains(t, screen, "KEEP_ME=visible")
	require.Contains(t, screen, "TERM=xterm-256color")
	for _, gone := range []string{"s3cr3t", "CLAUDECODE", "OTHER="} {
		require.NotContains(t, screen, gone)
	}
	cast, err := os.ReadFile(b.cast)
	require.NoError(t, err)
	require.Contains(t, string(cast), "KEEP_ME=visible")
	require.NotContains(t, string(cast), "s3cr3t")
}

func TestPasteIsBracketedOnlyWhenEnabled(t *testing.T) {
	t.Parallel()
	on := setup(t, shSpec(`printf '\033[?2004hready>'; exec cat -v`, `ready>`))
	off := setup(t, shSpec(`printf 'ready>'; exec cat -v`, `ready>`))
	for _, s := range []*Session{on.s, off.s} {
		require.NoError(t, s.WaitReady(context.Background()))
		require.NoError(t, s.Deliver("hello"))
		waitFor(t, s, "cat to print the paste", func() bool {
			return strings.Count(s.View().Text(), "hello") >= 2 // echo, then cat -v
		})
	}
	require.Contains(t, on.s.View().Text(), "^[[200~hello^[[201~")
	require.NotContains(t, off.s.View().Text(), "200~")
}

func TestPasteCannotEndBracketEarly(t *testing.T) {
	t.Parallel()
	require.Equal(t, "\x1b[200~ab\x1b[201~", string(pasteBytes("a\x1b[201~b", true)))
	require.Equal(t, "ab", string(pasteBytes("a\x1b[201~b", false)))
}

// Nothing typed as a paste is read as a key: a ^C, a ^D, a lone \r, a
// paste start and a clipboard write (OSC 52) inside the text are removed,
// its lines and tabs kept.
func TestPasteTypesNoControlOrEscape(t *testing.T) {
	t.Parallel()
	got := string(pasteBytes("stop\x03 now\x04\rnext\x1b[200~line\x1b]52;c;eA==\x07\tend\n", true))
	require.Equal(t, "\x1b[200~stop now\nnextline\tend\n\x1b[201~", got)
}

func TestWriteReachesProgramAndIsRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t, shSpec(`printf 'ready>'; read line; printf 'got:%s\n' "$line"`, `ready>`))
	require.NoError(t, b.s.WaitReady(context.Background()))
	require.NoError(t, b.s.Write([]byte("typed\r")))
	waitDone(t, b.s)
	require.Contains(t, b.s.View().Text(), "got:typed")
	f, err := os.Open(b.cast)
	require.NoError(t, err)
	defer f.Close()
	_, events, err := ReadCast(f)
	require.NoError(t, err)
	var input strings.Builder
	for _, ev := range events {
		if ev.Code == "i" {
			input.WriteString(ev.Data)
		}
	}
	require.Equal(t, "typed\r", input.String())
	require.Error(t, b.s.Write([]byte("late")), "input after exit must be refused")
}

func TestScrollbackKeepsLinesThatScrolledOff(t *testing.T) {
	t.Parallel()
	b := setup(t, shSpec(`i=1; while [ $i -le 30 ]; do printf 'line %d\n' $i; i=$((i+1)); done`, `x`),
		func(p *Params) { p.Rows = 5 })
	waitDone(t, b.s)
	sb := b.s.View().Scrollback(100)
	require.GreaterOrEqual(t, len(sb), 25)
	require.Equal(t, "line 1", sb[0])
	require.Len(t, b.s.View().Scrollback(2), 2)
	require.Nil(t, b.s.View().Scrollback(0))
}

func TestUTF8SplitAcrossReads(t *testing.T) {
	t.Parallel()
	// 日 is e6 97 a5; the program writes it in two pieces with a pause, so
	// the reader sees the character split across two reads.
	b := setup(t, shSpec(`printf '\346\227'; sleep 0.2; printf '\245本 wide\n'`, `x`))
	waitDone(t, b.s)
	require.Contains(t, b.s.View().Text(), "日本 wide")
	f, err := os.Open(b.cast)
	require.NoError(t, err)
	defer f.Close()
	h, events, err := ReadCast(f)
	require.NoError(t, err)
	require.Contains(t, Replay(events, h.Width, h.Height).Text(), "日本 wide")
}

func TestTitleAndCursor(t *testing.T) {
	t.Parallel()
	b := setup(t, shSpec(`printf '\033]2;my title\007\033[?25lab'; exec cat`, `ab`))
	waitFor(t, b.s, "title", func() bool { return b.s.View().Title() == "my title" })
	x, y, visible := b.s.View().Cursor()
	require.Equal(t, []int{2, 0}, []int{x, y})
	require.False(t, visible)
}

func TestStartRefusesUnknownProgram(t *testing.T) {
	t.Parallel()
	spec := shSpec("", "x")
	spec.Argv = []string{"no-such-program-here"}
	_, err := Start(Params{Spec: spec, Dir: t.TempDir(), Cols: 80, Rows: 24, Environ: []string{"PATH=/usr/bin:/bin"}})
	require.ErrorContains(t, err, `"no-such-program-here" not found`)
}

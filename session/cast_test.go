package session

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCastReplayReproducesLiveScreen(t *testing.T) {
	t.Parallel()
	script := `printf '\033[1;31mred\033[0m plain\r\n日本語 wide ✓\r\nready>'; read x; ` +
		`i=1; while [ $i -le 40 ]; do printf 'row %d \033[38;2;10;200;30mtrue\033[0m\r\n' $i; i=$((i+1)); done; ` +
		`printf '\033[5;5Hmoved\033[2;1H\033[Kcleared'; read y`
	b := setup(t, shSpec(script, `ready>`))
	s := b.s
	require.NoError(t, s.WaitReady(context.Background()))
	require.NoError(t, s.Resize(100, 30))
	require.NoError(t, s.Write([]byte("go\r")))
	waitText(t, s, "cleared")
	live := s.View().Text()
	liveRender := s.View().Render()
	require.NoError(t, s.Stop(time.Second))

	f, err := os.Open(b.cast)
	require.NoError(t, err)
	defer f.Close()
	h, events, err := ReadCast(f)
	require.NoError(t, err)
	require.Equal(t, 2, h.Version)
	require.Equal(t, []int{80, 24}, []int{h.Width, h.Height})
	require.Equal(t, "xterm-256color", h.Env["TERM"])
	require.NotZero(t, h.Timestamp)
	codes := map[string]int{}
	last := 0.0
	for _, ev := range events {
		require.GreaterOrEqual(t, ev.Time, last)
		last = ev.Time
		codes[ev.Code]++
		if ev.Code == "r" {
			require.Equal(t, "100x30", ev.Data)
		}
	}
	require.Equal(t, 1, codes["r"])
	require.Positive(t, codes["o"])
	require.Positive(t, codes["i"])

	replay := Replay(events, h.Width, h.Height)
	cols, rows := replay.Size()
	require.Equal(t, []int{100, 30}, []int{cols, rows})
	require.Equal(t, live, replay.Text())
	require.Equal(t, liveRender, replay.Render())
}

func TestCastTimesNeverGoBack(t *testing.T) {
	t.Parallel()
	base := time.Unix(1700000000, 0)
	times := []time.Duration{0, time.Second, 500 * time.Millisecond, 2 * time.Second}
	i := 0
	clock := func() time.Time {
		d := times[min(i, len(times)-1)]
		i++
		return base.Add(d)
	}
	path := filepath.Join(t.TempDir(), "c.cast")
	c, err := createCast(path, 10, 2, nil, clock)
	require.NoError(t, err)
	c.event("o", []byte("a"))
	c.event("o", []byte("b\xe6\x97")) // the clock steps back here; the character is split
	c.event("o", []byte("\xa5"))
	require.NoError(t, c.Close())
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	_, events, err := ReadCast(f)
	require.NoError(t, err)
	require.Equal(t, []CastEvent{{1, "o", "a"}, {1, "o", "b"}, {2, "o", "日"}}, events)
}

func TestReadCastIsStrict(t *testing.T) {
	t.Parallel()
	const head = `{"version":2,"width":80,"height":24}` + "\n"
	cases := map[string]string{
		"empty":          ``,
		"not json":       "hello\n",
		"version 1":      `{"version":1,"width":80,"height":24}` + "\n",
		"no size":        `{"version":2}` + "\n",
		"time goes back": head + `[1.0, "o", "a"]` + "\n" + `[0.5, "o", "b"]` + "\n",
		"two elements":   head + `[1.0, "o"]` + "\n",
		"unknown code":   head + `[1.0, "x", "a"]` + "\n",
		"bad resize":     head + `[1.0, "r", "wide"]` + "\n",
		"time is text":   head + `["1", "o", "a"]` + "\n",
		"data not text":  head + `[1.0, "o", 5]` + "\n",
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, _, err := ReadCast(strings.NewReader(doc))
			require.Error(t, err)
		})
	}
	h, events, err := ReadCast(strings.NewReader(head + `[0.1, "o", "hi"]` + "\n" + `[0.1, "m", ""]` + "\n"))
	require.NoError(t, err)
	require.Equal(t, 80, h.Width)
	require.Len(t, events, 2)
}

func TestTerminalHandlesSplitUTF8AndWideChars(t *testing.T) {
	t.Parallel()
	term := newTerminal(20, 3, 0, nil)
	defer term.Close()
	for _, b := range []byte("日本\x1b[38;2;1;2;3mé\x1b[0m|") {
		_, err := term.Write([]byte{b})
		require.NoError(t, err)
	}
	require.Equal(t, "日本é|", strings.Split(term.Text(), "\n")[0])
	x, _, _ := term.Cursor()
	require.Equal(t, 6, x, "wide characters take two columns")
	require.Contains(t, term.Render(), "38;2;1;2;3")
}

func TestTerminalAnswersCursorQueryWithoutBlocking(t *testing.T) {
	t.Parallel()
	replies := make(chan []byte, 1)
	term := newTerminal(20, 3, 0, func(b []byte) { replies <- b })
	defer term.Close()
	_, err := term.Write([]byte("ab\x1b[6n"))
	require.NoError(t, err)
	select {
	case r := <-replies:
		require.Equal(t, "\x1b[1;3R", string(r))
	case <-time.After(waitLimit):
		require.Fail(t, "no cursor position reply")
	}
}

package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// pasterEnv makes the test binary a stand-in agent CLI (runPaster).
const pasterEnv = "ORCHESTRA_SESSION_TEST_PASTER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(pasterEnv); mode != "" {
		runPaster(mode)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// runPaster behaves like an agent CLI that collapses a paste into a
// placeholder at its prompt, as Claude Code does. Its modes: "prompt" takes
// every submit key; "late" drops the first submit key after a paste (as
// Claude Code 2.1.197 drops the one that arrives with it) and takes the
// next; "deaf" never takes one; "busy" is at work when the paste comes:
// its screen changes at once, the paste shows only a moment later, and a
// submit key that arrives before it shows is lost (Gemini CLI under load).
func runPaster(mode string) {
	fd := int(os.Stdin.Fd())
	if t, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil {
		raw := *t
		raw.Lflag &^= unix.ECHO | unix.ICANON | unix.ISIG | unix.IEXTEN
		raw.Iflag &^= unix.ICRNL | unix.IXON
		raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
		_ = unix.IoctlSetTermios(fd, unix.TCSETS, &raw)
	}
	var mu sync.Mutex // the busy mode draws the paste from a timer
	status, prompt, taken := "ready", "", 0
	draw := func() {
		fmt.Printf("\x1b[2J\x1b[H%s\r\n─────\r\n❯ %s\r\n─────\r\n", status, prompt)
	}
	fmt.Print("\x1b[?2004h")
	draw()
	var (
		paste   []byte
		inPaste bool
		pending bool
		dropped bool
		buf     = make([]byte, 64<<10)
		carry   []byte
	)
	for {
		n, err := os.Stdin.Read(buf)
		if err != nil {
			return
		}
		mu.Lock()
		data := append(carry, buf[:n]...)
		carry = nil
		for len(data) > 0 {
			switch {
			case bytes.HasPrefix(data, []byte(pasteStart)):
				inPaste, paste, data = true, nil, data[len(pasteStart):]
			case inPaste && bytes.HasPrefix(data, []byte(pasteEnd)):
				inPaste, dropped = false, false
				data = data[len(pasteEnd):]
				show := func() {
					pending = true
					prompt = fmt.Sprintf("[Pasted text #1 +%d lines]", bytes.Count(paste, []byte("\n")))
					draw()
				}
				if mode != "busy" {
					show()
					break
				}
				status = "working on something else"
				draw()
				time.AfterFunc(300*time.Millisecond, func() {
					mu.Lock()
					defer mu.Unlock()
					show()
				})
			case inPaste:
				if i := bytes.IndexByte(data, 0x1b); i > 0 {
					paste, data = append(paste, data[:i]...), data[i:]
				} else if i < 0 {
					paste, data = append(paste, data...), nil
				} else if len(data) < len(pasteEnd) {
					carry, data = data, nil
				} else {
					paste, data = append(paste, data[0]), data[1:]
				}
			case data[0] == '\r':
				data = data[1:]
				if !pending || mode == "deaf" || (mode == "late" && !dropped) {
					dropped = true
					continue
				}
				taken++
				pending, prompt = false, ""
				status = fmt.Sprintf("TOOK %d: %d lines", taken, bytes.Count(paste, []byte("\n")))
				draw()
			default:
				data = data[1:]
			}
		}
		mu.Unlock()
	}
}

func pasterSpec(mode string) Spec {
	return Spec{
		Name: "paster", Argv: []string{os.Args[0]}, Env: []string{"PATH", "HOME"},
		SetEnv: map[string]string{pasterEnv: mode}, Delivery: DeliveryType,
		Ready: `(?m)^❯`, Submit: `\r`, Pending: `(?m)^❯ \[Pasted text #\d+[^\n]*\n─{3,}`,
		Quiet: Duration{100 * time.Millisecond}, LaunchTimeout: Duration{waitLimit}, SubmitRetries: 2,
	}
}

// submitsSent counts the submit keys the session sent, from its recording.
func submitsSent(t *testing.T, b bundle) int {
	t.Helper()
	data, err := os.ReadFile(b.cast)
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		if ev, err := parseEvent([]byte(line)); err == nil && ev.Code == "i" {
			n += strings.Count(ev.Data, "\r")
		}
	}
	return n
}

const eightyLines = "line\n"

// A program that takes the brief at once is sent one submit key.
func TestDeliverCheckedTakenAtOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, pasterSpec("prompt"))
	require.NoError(t, b.s.WaitReady(context.Background()))
	require.NoError(t, b.s.DeliverChecked(context.Background(), strings.Repeat(eightyLines, 80)))
	waitText(t, b.s, "TOOK 1: 80 lines")
	require.NoError(t, b.s.Stop(time.Second))
	require.Equal(t, 1, submitsSent(t, b))
}

// A program that drops the submit key sent with a paste (Claude Code
// 2.1.197 shows "[Pasted text #1 +80 lines]" and waits) gets it again after
// a pause, and takes the brief exactly once.
func TestDeliverCheckedResendsSubmitUntilTaken(t *testing.T) {
	t.Parallel()
	b := setup(t, pasterSpec("late"))
	require.NoError(t, b.s.WaitReady(context.Background()))
	require.NoError(t, b.s.DeliverChecked(context.Background(), strings.Repeat(eightyLines, 80)))
	waitText(t, b.s, "TOOK 1: 80 lines")
	require.NotContains(t, b.s.View().Text(), "Pasted text")
	require.NoError(t, b.s.Stop(time.Second))
	require.Equal(t, 2, submitsSent(t, b), "the first submit was dropped, the second taken")
}

// A program at work when the paste comes changes its screen before the
// paste shows at its prompt, and loses the submit key that came with it:
// the changed screen is not taken for the input taken, the paste is seen
// waiting, and the submit key is sent again.
func TestDeliverCheckedWaitsForAPasteShownLate(t *testing.T) {
	t.Parallel()
	b := setup(t, pasterSpec("busy"))
	require.NoError(t, b.s.WaitReady(context.Background()))
	require.NoError(t, b.s.DeliverChecked(context.Background(), strings.Repeat(eightyLines, 80)))
	waitText(t, b.s, "TOOK 1: 80 lines")
	require.NoError(t, b.s.Stop(time.Second))
	require.Equal(t, 2, submitsSent(t, b), "the first submit was lost, the second taken")
}

// One that never takes it is refused after the bounded re-sends, and the
// refusal says what the screen shows. Corrections go the same way.
func TestDeliverCheckedRefusesWithWhatTheScreenShows(t *testing.T) {
	t.Parallel()
	b := setup(t, pasterSpec("deaf"))
	require.NoError(t, b.s.WaitReady(context.Background()))
	for _, send := range []func() error{
		func() error { return b.s.DeliverChecked(context.Background(), strings.Repeat(eightyLines, 80)) },
		func() error { return b.s.SendChecked(context.Background(), "HUMAN DECISION: stop\nand think") },
	} {
		err := send()
		var ref *task.Refusal
		require.True(t, errors.As(err, &ref), "%v", err)
		require.Equal(t, task.ReasonInputNotAccepted, ref.Reason)
		require.Contains(t, ref.Detail, "sent 3 times")
		require.Contains(t, ref.Detail, "[Pasted text #1 +")
	}
	require.NoError(t, b.s.Stop(time.Second))
	require.Equal(t, 6, submitsSent(t, b), "one submit and two re-sends for each input, no more")
}

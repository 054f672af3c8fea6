package agent

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// submits returns the messages submitted in evs.
func submits(evs []inputEvent) []string {
	var out []string
	for _, e := range evs {
		if e.kind == inSubmit {
			out = append(out, e.text)
		}
	}
	return out
}

func TestInputParser(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"typed then submit", "fix it\r", []string{"fix it"}},
		{"bare submit", "\r", []string{""}},
		{"crlf submits once", "a\r\nb\r\n", []string{"a", "b"}},
		{"lf alone submits (a pipe, not a tty)", "a\nb\n", []string{"a", "b"}},
		{"paste keeps its newlines", pasteStart + "line 1\rline 2\r\nline 3\n" + pasteEnd + "\r", []string{"line 1\nline 2\nline 3\n"}},
		{"paste then typed", pasteStart + "a\nb" + pasteEnd + "c\r", []string{"a\nbc"}},
		{"arrow keys and ss3 are ignored", "a\x1b[A\x1bOBb\r", []string{"ab"}},
		{"backspace erases a rune", "né\x7f\x7fo\r", []string{"o"}},
		{"no submit yet", "half", nil},
		{"escape inside a paste is content", pasteStart + "x\x1b[1my" + pasteEnd + "\r", []string{"x\x1b[1my"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var whole inputParser
			require.Equal(t, tc.want, submits(whole.feed([]byte(tc.in))))
			// Byte by byte, as a slow pty may deliver it: the same messages.
			var split inputParser
			var evs []inputEvent
			for i := range len(tc.in) {
				evs = append(evs, split.feed([]byte{tc.in[i]})...)
			}
			require.Equal(t, tc.want, submits(evs))
		})
	}
}

func TestInputParserEvents(t *testing.T) {
	t.Parallel()
	var p inputParser
	evs := p.feed([]byte("ab" + pasteStart + "1\r2\r3" + pasteEnd + "\x03"))
	require.Equal(t, []inputEvent{
		{kind: inEcho, text: "ab"},
		{kind: inPasted, text: "ab1\n2\n3", lines: 3},
		{kind: inInterrupt},
	}, evs)
	require.Equal(t, []inputEvent{{kind: inSubmit, text: "ab1\n2\n3"}}, p.feed([]byte("\r")))
	require.Equal(t, []inputEvent{{kind: inEOF}}, p.feed([]byte{keyCtrlD}))
	require.Equal(t, []inputEvent{{kind: inEcho, text: "x"}}, p.feed([]byte("x\x04")), "ctrl-d only ends an empty prompt")
}

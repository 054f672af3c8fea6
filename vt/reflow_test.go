package vt

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// resizeSeq is a run of resizes that narrows, widens, shrinks and grows
// the height, then does two at once, with a little output after some, so
// where the cursor was kept shows too.
func resizeSeq(cols, rows int) []step {
	return []step{
		{cols: max(cols*2/3, 5), rows: rows},
		{data: []byte("ab"), cols: cols + cols/2, rows: rows},
		{cols: cols + cols/2, rows: max(rows*2/3, 3)},
		{data: []byte("\r\nc"), cols: cols + cols/2, rows: rows + rows/2},
		{cols: max(cols/2, 4), rows: max(rows/2, 3)},
		{data: []byte("d"), cols: cols, rows: rows},
	}
}

// checkStepsAgainstTmux runs data then the steps through tmux and a
// Terminal and fails on any differing cell after each step.
func checkStepsAgainstTmux(t *testing.T, cols, rows int, data []byte, steps []step) {
	t.Helper()
	all := append([]step{{data: data}}, steps...)
	refs := tmuxEachStep(t, cols, rows, all)
	term := New(cols, rows, DefaultHistory, nil)
	for i, st := range all {
		_, _ = term.Write(st.data)
		if st.cols > 0 {
			term.Resize(st.cols, st.rows)
		}
		if d := diffScreens(term, refs[i]); len(d) > 0 {
			if len(d) > 20 {
				d = append(d[:20], fmt.Sprintf("... and %d more", len(d)-20))
			}
			t.Fatalf("after step %d (%dx%d): %d differences from tmux:\n%s\nours:\n%s", i, term.cols, term.rows, len(d), strings.Join(d, "\n"), term.Text())
		}
	}
}

// reflowCases are screens whose lines wrap: long lines, wide characters
// at the margin, colours across the wrap, a prompt mid-line, a history
// deep enough that widening pulls it back into view.
var reflowCases = []struct {
	name string
	data string
}{
	{"one long line", strings.Repeat("0123456789", 10) + "x"},
	{"long line then prompt", strings.Repeat("abcdefghij", 4) + "\r\n$ "},
	{"brief line", "$ orchestra: the brief for phase implement is in .orchestra/brief.md (read it first)\r\n$ "},
	{"history of long lines", strings.Repeat(strings.Repeat("h", 33)+"\r\n", 20) + "$ "},
	{"wide at the margin", strings.Repeat("a", 19) + "日本語テキスト" + strings.Repeat("b", 15) + "\r\nok"},
	{"colour across the wrap", "\x1b[41m" + strings.Repeat("r", 25) + "\x1b[0m\x1b[42m" + strings.Repeat("g", 10) + "\x1b[0m"},
	{"written trailing spaces", "abc" + strings.Repeat(" ", 17) + "def\r\nnext"},
	{"cursor moved back", strings.Repeat("z", 30) + "\x1b[1;5H"},
	{"cursor mid wrapped line", strings.Repeat("m", 30) + "\x1b[2;3H"},
	{"pending wrap", strings.Repeat("p", 20)},
	{"erased tail", strings.Repeat("e", 30) + "\x1b[2;3H\x1b[K"},
	{"cleared screen", strings.Repeat("c", 50) + "\x1b[2J\x1b[Hafter clear " + strings.Repeat("w", 15)},
	{"combining", strings.Repeat("e\u0301", 25)},
	{"many short", strings.Repeat("s\r\n", 15) + strings.Repeat("L", 45)},
	{"empty lines between", strings.Repeat("x", 25) + "\r\n\r\n\r\n" + strings.Repeat("y", 25)},
	{"scroll region", "\x1b[2;6r\x1b[6;1H" + strings.Repeat("region line that is long\r\n", 8) + "\x1b[r\x1b[9;1H" + strings.Repeat("q", 24)},
}

// TestReflowAgainstTmux: after every resize of the sequence each cell and
// the cursor are tmux's, for screens built to wrap and for the torture
// corpus.
func TestReflowAgainstTmux(t *testing.T) {
	needTmux(t)
	for _, tc := range reflowCases {
		t.Run(tc.name, func(t *testing.T) {
			checkStepsAgainstTmux(t, 20, 12, []byte(tc.data), resizeSeq(20, 12))
		})
	}
	for _, tc := range torture {
		t.Run("torture/"+tc.name, func(t *testing.T) {
			if why := tortureFollowsXterm[tc.name]; why != "" {
				t.Skipf("follows xterm, not tmux: %s", why)
			}
			checkStepsAgainstTmux(t, 20, 12, []byte(tc.data), resizeSeq(20, 12))
		})
	}
}

// TestCastsReflowAgainstTmux replays each recording to three points and
// resizes the pane through the sequence from there.
func TestCastsReflowAgainstTmux(t *testing.T) {
	needTmux(t)
	casts, err := filepath.Glob(filepath.Join("testdata", "casts", "*.cast"))
	if err != nil || len(casts) == 0 {
		t.Fatalf("no casts under testdata/casts: %v", err)
	}
	for _, path := range casts {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".cast"), func(t *testing.T) {
			cols, rows, events := readCast(t, path)
			for _, p := range []int{1, 2, 3} {
				n := len(events) * p / 3
				var b strings.Builder
				for _, e := range events[:n] {
					b.WriteString(e)
				}
				checkStepsAgainstTmux(t, cols, rows, []byte(b.String()), resizeSeq(cols, rows))
			}
		})
	}
}

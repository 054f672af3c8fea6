package vt

import (
	"strings"
	"testing"
)

// torture holds escape-sequence cases where emulators commonly differ.
var torture = []struct {
	name string
	data string
}{
	{"plain", "hello world\r\nsecond line"},
	{"sgr", "\x1b[1;31mbold red\x1b[0m \x1b[38;5;200mpink\x1b[48;2;10;20;30m on rgb\x1b[m \x1b[3;4;7;9mmany\x1b[0m \x1b[92mbright\x1b[103m bg\x1b[0m"},
	{"sgr colon", "\x1b[38:2::1:2:3mrgb colon\x1b[0m \x1b[38:5:33mix\x1b[4:3mcurly\x1b[0m"},
	{"wrap", strings.Repeat("abcdefghij", 5) + "\r\nnext"},
	{"pending wrap then CR", strings.Repeat("x", 20) + "\rY"},
	{"wide chars", "日本語テキスト 🎉 ok\r\n中文"},
	{"wide at right margin", strings.Repeat("a", 19) + "日本\r\n" + strings.Repeat("b", 18) + "日本"},
	{"combining", "cafe\u0301 nai\u0308ve e\u0301\u0302"},
	{"scroll", strings.Repeat("line\r\n", 30) + "end"},
	{"scroll region", "\x1b[2;5r\x1b[5;1H" + strings.Repeat("region\r\n", 8) + "\x1b[r\x1b[10;1Houtside"},
	{"reverse index", "\x1b[3;6r\x1b[3;1H\x1bM\x1bMtop\x1b[r"},
	{"erase in colour", "\x1b[44mblue\x1b[K\r\n\x1b[41m\x1b[2J\x1b[5;5Hx\x1b[1K\x1b[0m\x1b[6;1H\x1b[42m\x1b[3X\x1b[0m"},
	{"erase display", "aaaa\r\nbbbb\r\ncccc\x1b[2;2H\x1b[J\x1b[1;3H\x1b[1J"},
	{"alt screen", "main text\x1b[?1049h\x1b[1;1Halt text\x1b[?1049lback"},
	{"alt screen 47", "main\x1b[?47halt\x1b[?47l!"},
	{"insert delete line", "1\r\n2\r\n3\r\n4\r\n5\x1b[2;1H\x1b[2L\x1b[4;1H\x1b[1M"},
	{"insert delete char", "abcdefghij\x1b[1;3H\x1b[2@\x1b[1;8H\x1b[3P"},
	{"insert mode", "abcdef\x1b[1;2H\x1b[4hXY\x1b[4lZ"},
	{"tabs", "a\tb\tc\r\n\x1b[3g\x1b[1;5H\x1bH\r\tx\t\x1b[Zy"},
	{"origin mode", "\x1b[5;10r\x1b[?6h\x1b[1;1Horigin\x1b[20;1Hbottom\x1b[?6l\x1b[r"},
	{"dec graphics", "\x1b(0lqqk\r\nx  x\r\nmqqj\x1b(B ascii \x0e\x1b)0lq\x0f"},
	{"cursor moves", "\x1b[5;5H*\x1b[2A^\x1b[3Bv\x1b[10C>\x1b[4D<\x1b[G|\x1b[3d_\x1b[2E#\x1b[F%"},
	{"save restore", "\x1b[3;3H\x1b[31m\x1b7\x1b[10;10H\x1b[0mX\x1b8Y\x1b[s\x1b[1;1H\x1b[uZ"},
	{"decaln", "\x1b#8\x1b[3;3Hok"},
	{"repeat", "ab\x1b[5b"},
	{"no autowrap", "\x1b[?7l" + strings.Repeat("z", 25) + "Q\x1b[?7h"},
	{"backspace", "abc\b\bX\r\n" + strings.Repeat("w", 20) + "\bV"},
	{"osc title with 0x9c", "before\x1b]0;✳ Claude Code\x07after\x1b]2;title\x1b\\end"},
	{"dcs and apc ignored", "a\x1bP1$r0m\x1b\\b\x1b_apc\x1b\\c\x1b^pm\x1b\\d"},
	{"scroll up down", "1\r\n2\r\n3\r\n4\x1b[2S\x1b[1T"},
	{"overwrite wide start", "日本語\x1b[1;3Hx\x1b[2;1H日本語\x1b[2;3Hyz"},
	{"erase in colour mid-line", "abcdefghij\x1b[1;3H\x1b[42m\x1b[3X\x1b[2;1Hklmnopqrst\x1b[2;2H\x1b[45m\x1b[2P\x1b[0m\x1b[3;1Hxyz\x1b[3;1H\x1b[46m\x1b[2@\x1b[0m"},
	{"scrolled lines take the background", "\x1b[44m" + strings.Repeat("\r\n", 14) + "x\x1b[0mtext"},
	{"inserted lines take the background", "1\r\n2\r\n3\x1b[1;1H\x1b[43m\x1b[L\x1b[0mabc"},
	{"lf at bottom with bg", "\x1b[44m" + strings.Repeat("\r\n", 30) + "x\x1b[0m"},
	{"cursor past bottom", "\x1b[100;100Hz\x1b[100B\x1b[100Cq"},
	{"c0 in csi", "\x1b[1\r;31mred?\x1b[0m"},
	{"invalid utf8", "a\xffb\xc3c\xe2\x9cd"},
	{"alt screen clear with bg", "\x1b[45m\x1b[?1049h\x1b[0mx\x1b[?1049l"},
	{"wrap then LF", strings.Repeat("q", 20) + "\nr"},
}

// tortureFollowsXterm names the torture cases where tmux departs from
// xterm, and why; those are compared with xterm.js (xterm decides).
var tortureFollowsXterm = map[string]string{
	"backspace":    "BS while a wrap is pending moves left from the last column (tmux stays in it)",
	"wrap then LF": "LF while a wrap is pending ends the wait in the last column (tmux still wraps the next character)",
}

func TestTortureAgainstTmux(t *testing.T) {
	needTmux(t)
	for _, tc := range torture {
		t.Run(tc.name, func(t *testing.T) {
			if why := tortureFollowsXterm[tc.name]; why != "" {
				t.Skipf("follows xterm, not tmux: %s (TestTortureAgainstXterm)", why)
			}
			checkAgainstTmux(t, 20, 12, []byte(tc.data), 0)
		})
	}
}

// TestTortureAgainstXterm draws the torture corpus in xterm.js too: the
// cases where tmux departs from xterm must match it; the others are
// compared by character and width, the colours being tmux's to settle.
func TestTortureAgainstXterm(t *testing.T) {
	var datas [][]byte
	for _, tc := range torture {
		datas = append(datas, []byte(tc.data))
	}
	refs := xtermScreens(t, 20, 12, datas)
	for i, tc := range torture {
		term := New(20, 12, DefaultHistory, nil)
		_, _ = term.Write([]byte(tc.data))
		d := diffXterm(term, refs[i])
		why, mustMatch := tortureFollowsXterm[tc.name]
		switch {
		case len(d) > 0 && mustMatch:
			t.Errorf("%s (follows xterm: %s): %d differences from xterm.js:\n%s\nours:\n%s", tc.name, why, len(d), strings.Join(d, "\n"), term.Text())
		case len(d) > 0:
			// tmux is the reference here; say where xterm.js differs.
			t.Logf("%s: tmux's screen, %d cells or cursor unlike xterm.js's (%s)", tc.name, len(d), d[0])
		}
	}
}

// TestResizeAgainstTmux: a pane that shrinks keeps its bottom rows (the
// top ones go to the history), and one that grows pulls them back, as in
// tmux; output after the resize lands where tmux puts it. Widths change
// only with lines shorter than the new width: tmux re-wraps long lines,
// this emulator cuts them.
func TestResizeAgainstTmux(t *testing.T) {
	needTmux(t)
	var lines strings.Builder
	for i := range 30 {
		lines.WriteString("\x1b[3" + string(rune('1'+i%7)) + "mline " + string(rune('a'+i%26)) + "\x1b[0m\r\n")
	}
	cases := []struct {
		name  string
		steps []step
	}{
		{"shrink at the bottom", []step{{data: []byte(lines.String() + "prompt> "), cols: 30, rows: 6}, {data: []byte("typed\r\nmore")}}},
		{"shrink then grow", []step{{data: []byte(lines.String() + "$ "), cols: 30, rows: 5}, {data: []byte("x"), cols: 30, rows: 14}, {data: []byte("y")}}},
		{"shrink with the cursor high", []step{{data: []byte("top\r\nsecond\x1b[1;4H"), cols: 30, rows: 4}, {data: []byte("!")}}},
		{"wider and taller", []step{{data: []byte(lines.String()), cols: 40, rows: 16}, {data: []byte("after")}}},
		{"alternate screen resized", []step{{data: []byte(lines.String() + "\x1b[?1049h\x1b[Halt"), cols: 30, rows: 6}, {data: []byte("\x1b[?1049lmain")}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ref := tmuxSteps(t, 30, 10, tc.steps)
			term := New(30, 10, DefaultHistory, nil)
			for _, st := range tc.steps {
				_, _ = term.Write(st.data)
				if st.cols > 0 {
					term.Resize(st.cols, st.rows)
				}
			}
			if d := diffScreens(term, ref); len(d) > 0 {
				t.Errorf("%d differences from tmux:\n%s\nours:\n%s", len(d), strings.Join(d, "\n"), term.Text())
			}
		})
	}
}

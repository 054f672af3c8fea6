package vt

import (
	"sync"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// bmpWidth caches x/ansi's wcwidth answer for runes of the basic
// multilingual plane (0 unknown, else width+1): measuring a rune through a
// string every time it is printed would dominate ingest.
var (
	bmpWidth     [0x10000]uint8
	bmpWidthOnce sync.Once
)

func initWidths() {
	// One string of every character, measured a slice at a time, so the
	// table costs one allocation rather than one per character.
	all := make([]byte, 0, 0x10000*3)
	for r := rune(0); r < 0x10000; r++ {
		all = utf8.AppendRune(all, r)
	}
	s := string(all)
	for r := rune(0); r < 0x10000; r++ {
		n := utf8.RuneLen(r)
		if n < 0 {
			n = 3 // surrogates encode as U+FFFD
		}
		bmpWidth[r] = uint8(min(ansi.StringWidthWc(s[:n]), 2)) + 1
		s = s[n:]
	}
}

// runeWidth is the number of columns a character takes: 0 for combining
// marks and other zero-width characters, 2 for wide ones, as x/ansi's
// wcwidth method measures them (what tmux and xterm do per codepoint).
func runeWidth(r rune) int {
	if r < 0x7f && r >= 0x20 {
		return 1
	}
	bmpWidthOnce.Do(initWidths)
	if r < 0x10000 && r >= 0 {
		return int(bmpWidth[r]) - 1
	}
	var buf [4]byte
	n := utf8.EncodeRune(buf[:], r)
	return min(ansi.StringWidthWc(string(buf[:n])), 2)
}

// Package vt is the console's terminal emulator: it turns an agent's pty
// output into a grid of cells the way tmux does, cheaply enough to keep
// sixteen flooding panes on screen.
//
// The grid is a ring of lines, so a scroll moves no cells; the line that
// leaves the top is encoded into a compact history (text plus style runs)
// whose oldest entries are reused once it is full; styles are interned, so a
// cell is twelve bytes. Escape sequences are parsed by x/ansi's parser, except
// that OSC and other strings are collected here, so a 0x9C byte inside the
// UTF-8 of a title (Claude Code's "✳") never ends the string.
//
// A Terminal is not safe for concurrent use; the session guards it.
package vt

import (
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// DefaultHistory is how many lines scroll off the top are kept by default.
const DefaultHistory = 10000

// maxStringLen bounds an OSC or DCS string, so a program cannot make the
// console hold an unterminated string of any size.
const maxStringLen = 4096

// Modes are the terminal modes a program set that matter to whoever sends
// it input: keys, pastes and mouse reports must be encoded to match.
type Modes struct {
	BracketedPaste bool // 2004
	AppCursor      bool // DECCKM (1): cursor keys send ESC O
	AppKeypad      bool // DECKPAM
	FocusEvents    bool // 1004
	// Mouse is the tracking mode: 0 off, or 9, 1000, 1002 or 1003.
	Mouse int
	// MouseEncoding is 0 (X10), 1005, 1006 (SGR) or 1015.
	MouseEncoding int
}

type cursor struct {
	x, y    int // x == cols means the next character wraps first
	style   Style
	styleID uint32
	origin  bool
	charset [2]byte // G0 and G1: 'B' ASCII or '0' DEC line drawing
	gl      int     // which of G0/G1 is in use (SI/SO)
}

// stringKind is the kind of control string being collected.
type stringKind uint8

const (
	strNone stringKind = iota
	strOSC
	strIgnore // DCS, SOS, PM, APC: collected and dropped
)

// Terminal is a VT emulator with tmux's behaviour, and xterm's where tmux
// departs from xterm (what ends a pending wrap).
type Terminal struct {
	cols, rows int
	main, alt  *screen
	scr        *screen
	hist       history

	styles *styleTable
	// compactions counts the style table's compactions, after which a
	// style id may name another style (RowCache)
	compactions uint64
	clusters    []string
	clusterIDs  map[string]rune
	runeStr     map[rune]string

	cur          cursor
	saved        cursor // DECSC
	savedAlt     cursor // 1049
	top, bottom  int    // scroll region, inclusive
	autowrap     bool
	insert       bool
	cursorHidden bool
	modes        Modes
	tabs         []bool
	lastRune     rune
	// hscrolled is how many of the newest history lines scrolled there
	// (not cleared there): a taller screen pulls back only those.
	hscrolled int
	// atMargin is 1 + the row of a character just printed in the last
	// column without autowrap (the cursor stays on it), else 0: a
	// combining mark then belongs to it, not to the one before.
	atMargin int

	p       *ansi.Parser
	params  [parser.MaxParamsSize]int
	cparams [parser.MaxParamsSize]ansi.Param
	pend    [utf8.UTFMax]byte
	npend   int
	str     stringKind
	strBuf  []byte
	strEsc  bool

	styleLimit int // compactStyles runs when the table outgrows it
	// Kept between compactions for reuse.
	spareStyles *styleTable
	spareHist   history
	styleMap    []uint32
	scratchLine line

	title   string
	titles  map[string]string
	version uint64
	reply   func([]byte)
}

// New returns a cols x rows terminal keeping history lines of scrollback.
// reply receives the terminal's answers to queries (cursor position, device
// attributes), which belong on the program's input; it may be nil.
func New(cols, rows, historyLines int, reply func([]byte)) *Terminal {
	cols, rows = max(cols, 1), max(rows, 1)
	t := &Terminal{
		cols: cols, rows: rows,
		main:       newScreen(cols, rows),
		styles:     newStyleTable(),
		clusterIDs: make(map[string]rune),
		runeStr:    make(map[rune]string),
		titles:     make(map[string]string),
		styleLimit: minStyleLimit,
		reply:      reply,
		p:          ansi.NewParser(),
	}
	t.hist.setLimit(historyLines)
	t.scr = t.main
	t.p.SetDataSize(0) // strings never reach the parser; see Write
	t.p.SetHandler(ansi.Handler{
		Execute:   t.execute,
		HandleCsi: t.csi,
		HandleEsc: t.esc,
	})
	t.reset()
	return t
}

// reset puts modes, cursor, region and tab stops to their power-on state.
func (t *Terminal) reset() {
	t.cur = cursor{charset: [2]byte{'B', 'B'}}
	t.saved, t.savedAlt = t.cur, t.cur
	t.top, t.bottom = 0, t.rows-1
	t.autowrap, t.insert, t.cursorHidden = true, false, false
	t.modes = Modes{}
	t.resetTabs()
}

func (t *Terminal) resetTabs() {
	t.tabs = make([]bool, t.cols)
	for x := 8; x < t.cols; x += 8 {
		t.tabs[x] = true
	}
}

// Write feeds program output to the terminal. It never fails.
func (t *Terminal) Write(p []byte) (int, error) {
	t.version++
	i := 0
	for i < len(p) {
		switch {
		case t.str != strNone:
			i = t.stringBytes(p, i)
		case t.npend > 0:
			i = t.finishRune(p, i)
		case t.p.State() != parser.GroundState:
			b := p[i]
			i++
			if b >= 0x80 {
				continue // no C1 controls in UTF-8 mode, as in tmux
			}
			t.p.Advance(b)
			t.enterString()
		default:
			b := p[i]
			switch {
			case b >= 0x20 && b < 0x7f:
				j := i + 1
				for j < len(p) && p[j] >= 0x20 && p[j] < 0x7f {
					j++
				}
				t.printASCII(p[i:j])
				i = j
			case b == ansi.ESC:
				if n := t.fastCSI(p[i:]); n > 0 {
					i += n
					continue
				}
				t.p.Advance(b)
				i++
			case b < 0x20:
				t.execute(b)
				i++
			case b == 0x7f:
				i++
			default:
				if !utf8.FullRune(p[i:]) {
					t.npend = copy(t.pend[:], p[i:])
					return len(p), nil
				}
				r, size := utf8.DecodeRune(p[i:])
				if r != utf8.RuneError || size > 1 {
					t.printRune(r)
				} // tmux drops bytes that are not UTF-8
				i += size
			}
		}
	}
	return len(p), nil
}

// finishRune completes a character split across writes.
func (t *Terminal) finishRune(p []byte, i int) int {
	for i < len(p) && t.npend < utf8.UTFMax && !utf8.FullRune(t.pend[:t.npend]) {
		if p[i]&0xc0 != 0x80 {
			break // not a continuation byte: the character was cut short
		}
		t.pend[t.npend] = p[i]
		t.npend++
		i++
	}
	if utf8.FullRune(t.pend[:t.npend]) {
		r, size := utf8.DecodeRune(t.pend[:t.npend])
		t.npend = 0
		if r != utf8.RuneError || size > 1 {
			t.printRune(r)
		}
		return i
	}
	if i < len(p) {
		t.npend = 0 // cut short: dropped, as tmux does
	}
	return i
}

// enterString takes over from the parser when it starts a control string.
// x/ansi's parser ends an OSC string at 0x9C even inside a UTF-8 character
// (charmbracelet/x#848), so strings are collected here, ending only at BEL
// or ESC \ as tmux does.
func (t *Terminal) enterString() {
	switch t.p.State() {
	case parser.OscStringState:
		t.str = strOSC
	case parser.DcsEntryState, parser.SosStringState, parser.PmStringState, parser.ApcStringState:
		t.str = strIgnore
	default:
		return
	}
	t.p.Reset()
	t.strBuf = t.strBuf[:0]
	t.strEsc = false
}

// stringBytes consumes control-string bytes from p[i:] and returns where it
// stopped.
func (t *Terminal) stringBytes(p []byte, i int) int {
	for ; i < len(p); i++ {
		b := p[i]
		if t.strEsc {
			t.strEsc = false
			t.endString()
			if b == '\\' {
				return i + 1
			}
			// ESC followed by anything else starts a new sequence.
			t.p.Advance(ansi.ESC)
			return i
		}
		switch b {
		case ansi.BEL:
			if t.str == strOSC {
				t.endString()
				return i + 1
			}
		case ansi.ESC:
			t.strEsc = true
		case ansi.CAN, ansi.SUB:
			t.str = strNone
			return i + 1
		default:
			if b >= 0x20 && len(t.strBuf) < maxStringLen {
				t.strBuf = append(t.strBuf, b)
			}
		}
	}
	return i
}

func (t *Terminal) endString() {
	kind := t.str
	t.str = strNone
	if kind != strOSC {
		return
	}
	cmd, data, ok := 0, t.strBuf, false
	for len(data) > 0 && data[0] >= '0' && data[0] <= '9' {
		cmd = cmd*10 + int(data[0]-'0')
		data = data[1:]
		ok = true
	}
	if !ok || (len(data) > 0 && data[0] != ';') {
		return
	}
	if len(data) > 0 {
		data = data[1:]
	}
	switch cmd {
	case 0, 2:
		if utf8.Valid(data) && string(data) != t.title {
			t.title = t.internTitle(data)
		}
	}
}

// internTitle returns data as a string, reusing one made before: agents
// cycle through a few titles (a spinner in the title, a task name), and a
// string per title change is the last allocation of a steady flood.
func (t *Terminal) internTitle(data []byte) string {
	if s, ok := t.titles[string(data)]; ok {
		return s
	}
	if len(t.titles) >= 64 {
		clear(t.titles)
	}
	s := string(data)
	t.titles[s] = s
	return s
}

// setStyle makes s the style of what is printed next.
func (t *Terminal) setStyle(s Style) {
	t.cur.style = s
	t.cur.styleID = t.styles.intern(s)
	if len(t.styles.list) > t.styleLimit {
		t.compactStyles()
	}
}

// blank is an erased cell: a space in the current background.
func (t *Terminal) blank() Cell {
	if t.cur.style.Bg.IsDefault() {
		return blankCell(0)
	}
	return blankCell(t.styles.intern(Style{Bg: t.cur.style.Bg}))
}

// evict is where a line leaving the top of the main screen goes.
func (t *Terminal) evict(l *line) {
	t.hist.push(l, t.clusters)
	t.hscrolled = min(t.hscrolled+1, t.hist.len())
}

// scrollUp scrolls the region up n lines; lines leaving the top of the
// region on the main screen go to the history, as in tmux 3.3 even when
// the region starts lower down.
func (t *Terminal) scrollUp(n int) {
	if t.scr == t.main && t.hist.limit > 0 {
		t.scr.scrollUp(t.top, t.bottom, n, t.blank(), t.evict)
		return
	}
	t.scr.scrollUp(t.top, t.bottom, n, t.blank(), nil)
	t.unwrapAbove(t.top)
}

// scrollDown scrolls the region down n lines. The rows it moves lose
// their wrapped mark, as tmux's line moves do.
func (t *Terminal) scrollDown(n int) {
	t.scr.scrollDown(t.top, t.bottom, n, t.blank())
	for y := t.top; y <= min(t.top+n, t.bottom); y++ {
		t.scr.line(y).wrapped = false
	}
	t.unwrapAbove(t.top)
}

// linefeed moves the cursor down, scrolling at the bottom of the region.
func (t *Terminal) linefeed() {
	switch {
	case t.cur.y == t.bottom:
		t.scrollUp(1)
	case t.cur.y < t.rows-1:
		t.cur.y++
	}
}

func (t *Terminal) reverseIndex() {
	t.endPendingWrap()
	switch {
	case t.cur.y == t.top:
		t.scrollDown(1)
	case t.cur.y > 0:
		t.cur.y--
	}
}

// execute runs a C0 control.
func (t *Terminal) execute(b byte) {
	switch b {
	case ansi.BS:
		switch {
		case t.cur.x > 0:
			// From a pending wrap the cursor is in the last column, so BS
			// goes to the one before it, as in xterm (tmux stays in the
			// last column).
			t.cur.x = min(t.cur.x, t.cols-1)
			if t.cur.x > 0 {
				t.cur.x--
			}
		case t.cur.y > 0 && t.scr.line(t.cur.y-1).wrapped:
			// tmux moves back over a wrap.
			t.cur.y--
			t.cur.x = t.cols - 1
		}
	case ansi.HT:
		t.tab(1)
	case ansi.LF, ansi.VT, ansi.FF:
		t.linefeed()
		t.endPendingWrap()
	case ansi.CR:
		t.cur.x = 0
	case ansi.SO:
		t.cur.gl = 1
	case ansi.SI:
		t.cur.gl = 0
	}
}

// endPendingWrap puts a cursor waiting to wrap back in the last column:
// in xterm a line feed, an index, a reverse index and the character
// insertions and erasures all end the wait (tmux keeps it).
func (t *Terminal) endPendingWrap() { t.cur.x = min(t.cur.x, t.cols-1) }

// tab moves to the n-th next tab stop (backwards for negative n).
func (t *Terminal) tab(n int) {
	if n > 0 && t.cur.x >= t.cols-1 {
		return
	}
	x := min(t.cur.x, t.cols-1)
	for ; n > 0 && x < t.cols-1; n-- {
		x++
		for x < t.cols-1 && !t.tabs[x] {
			x++
		}
	}
	for ; n < 0 && x > 0; n++ {
		x--
		for x > 0 && !t.tabs[x] {
			x--
		}
	}
	t.cur.x = x
}

// fastCSI parses a plain CSI sequence (ESC [, an optional private prefix,
// digits, ';' and ':', a final byte) held whole in b and runs it, without
// a parser call per byte: agents print one at every colour change. It
// returns the bytes used, or 0 to leave anything else (intermediates,
// controls inside, a sequence cut by the end of the write) to the parser.
// The parameters come out exactly as x/ansi's parser packs them.
func (t *Terminal) fastCSI(b []byte) int {
	if len(b) < 3 || b[1] != '[' {
		return 0
	}
	var cmd int
	i := 2
	if c := b[i]; c >= '<' && c <= '?' {
		cmd = int(c) << parser.PrefixShift
		i++
	}
	ps := t.params[:1]
	ps[0] = parser.MissingParam
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			k := len(ps) - 1
			if ps[k] == parser.MissingParam {
				ps[k] = 0
			}
			ps[k] = ps[k]*10 + int(c-'0')
		case c == ';' || c == ':':
			if len(ps) >= len(t.params)-2 {
				return 0
			}
			if c == ':' {
				ps[len(ps)-1] |= parser.HasMoreFlag
			}
			ps = append(ps, parser.MissingParam)
		case c >= 0x40 && c <= 0x7e:
			n := len(ps)
			if n == 1 && ps[0] == parser.MissingParam {
				n = 0
			}
			params := t.cparams[:n]
			for j := range params {
				params[j] = ansi.Param(ps[j])
			}
			t.csi(ansi.Cmd(cmd|int(c)), params)
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

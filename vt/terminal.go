// Package vt is the console's terminal emulator: it turns an agent's pty
// output into a grid of cells the way tmux does, cheaply enough to keep
// sixteen flooding panes on screen.
//
// The grid is a ring of lines, so a scroll moves no cells; the line that
// leaves the top is encoded into a compact history (text plus style runs)
// whose oldest entries are reused once it is full; styles are interned, so a
// cell is twelve bytes. Escape sequences are parsed by x/ansi's parser, except
// that OSC and other strings are collected by the input side (input.go), so
// a 0x9C byte inside the UTF-8 of a title (Claude Code's "✳") never ends
// the string.
//
// A Terminal is not safe for concurrent use; the session guards it.
package vt

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
	glyphs      glyphs

	cur          cursor
	saved        cursor // DECSC
	savedAlt     cursor // 1049
	top, bottom  int    // scroll region, inclusive
	autowrap     bool
	insert       bool
	cursorHidden bool
	modes        Modes
	tabs         tabStops
	lastRune     rune
	// hscrolled is how many of the newest history lines scrolled there
	// (not cleared there): a taller screen pulls back only those.
	hscrolled int
	// atMargin is 1 + the row of a character just printed in the last
	// column without autowrap (the cursor stays on it), else 0: a
	// combining mark then belongs to it, not to the one before.
	atMargin int

	in input

	styleLimit int // compactStyles runs when the table outgrows it
	// Kept between compactions for reuse.
	spareStyles *styleTable
	spareHist   history
	styleMap    []uint32
	scratchLine line

	version uint64
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
		glyphs:     newGlyphs(),
		styleLimit: minStyleLimit,
	}
	t.hist.setLimit(historyLines)
	t.scr = t.main
	t.in.init(t, reply)
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
	t.tabs.reset(t.cols)
}

// Write feeds program output to the terminal. It never fails.
func (t *Terminal) Write(p []byte) (int, error) {
	t.version++
	t.in.write(p)
	return len(p), nil
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
	t.hist.push(l, t.glyphs.clusters)
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

// endPendingWrap puts a cursor waiting to wrap back in the last column:
// in xterm a line feed, an index, a reverse index and the character
// insertions and erasures all end the wait (tmux keeps it).
func (t *Terminal) endPendingWrap() { t.cur.x = min(t.cur.x, t.cols-1) }

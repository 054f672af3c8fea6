package vt

import (
	"strconv"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
)

// input is the terminal's input side, as tmux's input.c is to its grid:
// it splits program output into text, controls and sequences, collects
// control strings (the title) itself and dispatches the rest to the
// Terminal's screen operations.
type input struct {
	t       *Terminal
	p       *ansi.Parser
	params  [parser.MaxParamsSize]int
	cparams [parser.MaxParamsSize]ansi.Param
	pend    [utf8.UTFMax]byte
	npend   int
	str     stringKind
	strBuf  []byte
	strEsc  bool

	title  string
	titles map[string]string
	reply  func([]byte)
}

// init ties the input to t and its parser's handler to the dispatch.
func (in *input) init(t *Terminal, reply func([]byte)) {
	in.t = t
	in.reply = reply
	in.titles = make(map[string]string)
	in.p = ansi.NewParser()
	in.p.SetDataSize(0) // strings never reach the parser; see write
	in.p.SetHandler(ansi.Handler{
		Execute:   in.execute,
		HandleCsi: in.csi,
		HandleEsc: in.esc,
	})
}

// write parses p, printing text on the terminal and running the controls
// and sequences in it.
func (in *input) write(p []byte) {
	t := in.t
	i := 0
	for i < len(p) {
		switch {
		case in.str != strNone:
			i = in.stringBytes(p, i)
		case in.npend > 0:
			i = in.finishRune(p, i)
		case in.p.State() != parser.GroundState:
			b := p[i]
			i++
			if b >= 0x80 {
				continue // no C1 controls in UTF-8 mode, as in tmux
			}
			in.p.Advance(b)
			in.enterString()
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
				if n := in.fastCSI(p[i:]); n > 0 {
					i += n
					continue
				}
				in.p.Advance(b)
				i++
			case b < 0x20:
				in.execute(b)
				i++
			case b == 0x7f:
				i++
			default:
				if !utf8.FullRune(p[i:]) {
					in.npend = copy(in.pend[:], p[i:])
					return
				}
				r, size := utf8.DecodeRune(p[i:])
				if r != utf8.RuneError || size > 1 {
					t.printRune(r)
				} // tmux drops bytes that are not UTF-8
				i += size
			}
		}
	}
}

// finishRune completes a character split across writes.
func (in *input) finishRune(p []byte, i int) int {
	t := in.t
	for i < len(p) && in.npend < utf8.UTFMax && !utf8.FullRune(in.pend[:in.npend]) {
		if p[i]&0xc0 != 0x80 {
			break // not a continuation byte: the character was cut short
		}
		in.pend[in.npend] = p[i]
		in.npend++
		i++
	}
	if utf8.FullRune(in.pend[:in.npend]) {
		r, size := utf8.DecodeRune(in.pend[:in.npend])
		in.npend = 0
		if r != utf8.RuneError || size > 1 {
			t.printRune(r)
		}
		return i
	}
	if i < len(p) {
		in.npend = 0 // cut short: dropped, as tmux does
	}
	return i
}

// enterString takes over from the parser when it starts a control string.
// x/ansi's parser ends an OSC string at 0x9C even inside a UTF-8 character
// (charmbracelet/x#848), so strings are collected here, ending only at BEL
// or ESC \ as tmux does.
func (in *input) enterString() {
	switch in.p.State() {
	case parser.OscStringState:
		in.str = strOSC
	case parser.DcsEntryState, parser.SosStringState, parser.PmStringState, parser.ApcStringState:
		in.str = strIgnore
	default:
		return
	}
	in.p.Reset()
	in.strBuf = in.strBuf[:0]
	in.strEsc = false
}

// stringBytes consumes control-string bytes from p[i:] and returns where it
// stopped.
func (in *input) stringBytes(p []byte, i int) int {
	for ; i < len(p); i++ {
		b := p[i]
		if in.strEsc {
			in.strEsc = false
			in.endString()
			if b == '\\' {
				return i + 1
			}
			// ESC followed by anything else starts a new sequence.
			in.p.Advance(ansi.ESC)
			return i
		}
		switch b {
		case ansi.BEL:
			if in.str == strOSC {
				in.endString()
				return i + 1
			}
		case ansi.ESC:
			in.strEsc = true
		case ansi.CAN, ansi.SUB:
			in.str = strNone
			return i + 1
		default:
			if b >= 0x20 && len(in.strBuf) < maxStringLen {
				in.strBuf = append(in.strBuf, b)
			}
		}
	}
	return i
}

func (in *input) endString() {
	kind := in.str
	in.str = strNone
	if kind != strOSC {
		return
	}
	cmd, data, ok := 0, in.strBuf, false
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
		if utf8.Valid(data) && string(data) != in.title {
			in.title = in.internTitle(data)
		}
	}
}

// internTitle returns data as a string, reusing one made before: agents
// cycle through a few titles (a spinner in the title, a task name), and a
// string per title change is the last allocation of a steady flood.
func (in *input) internTitle(data []byte) string {
	if s, ok := in.titles[string(data)]; ok {
		return s
	}
	if len(in.titles) >= 64 {
		clear(in.titles)
	}
	s := string(data)
	in.titles[s] = s
	return s
}

// execute runs a C0 control.
func (in *input) execute(b byte) {
	t := in.t
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
		t.cur.x = t.tabs.next(t.cur.x, 1, t.cols)
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

// fastCSI parses a plain CSI sequence (ESC [, an optional private prefix,
// digits, ';' and ':', a final byte) held whole in b and runs it, without
// a parser call per byte: agents print one at every colour change. It
// returns the bytes used, or 0 to leave anything else (intermediates,
// controls inside, a sequence cut by the end of the write) to the parser.
// The parameters come out exactly as x/ansi's parser packs them.
func (in *input) fastCSI(b []byte) int {
	if len(b) < 3 || b[1] != '[' {
		return 0
	}
	var cmd int
	i := 2
	if c := b[i]; c >= '<' && c <= '?' {
		cmd = int(c) << parser.PrefixShift
		i++
	}
	ps := in.params[:1]
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
			if len(ps) >= len(in.params)-2 {
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
			params := in.cparams[:n]
			for j := range params {
				params[j] = ansi.Param(ps[j])
			}
			in.csi(ansi.Cmd(cmd|int(c)), params)
			return i + 1
		default:
			return 0
		}
	}
	return 0
}

func (in *input) csi(cmd ansi.Cmd, params ansi.Params) {
	t := in.t
	n := param(params, 0, 1)
	switch cmd {
	case 'A':
		t.cursorUp(n)
	case 'B':
		t.cursorDown(n)
	case 'e':
		// VPR is a cursor position, not CUD: it leaves a scroll region
		// unless origin mode keeps the cursor in it (xterm's CursorSet).
		t.moveTo(t.cur.x, t.cur.y+n-t.originTop())
	case 'C', 'a':
		t.cur.x = min(min(t.cur.x, t.cols-1)+n, t.cols-1)
	case 'D':
		t.cur.x = max(min(t.cur.x, t.cols-1)-n, 0)
	case 'E':
		t.cursorDown(n)
		t.cur.x = 0
	case 'F':
		t.cursorUp(n)
		t.cur.x = 0
	case 'G', '`':
		t.cur.x = min(n, t.cols) - 1
	case 'H', 'f':
		t.moveTo(param(params, 1, 1)-1, n-1)
	case 'I':
		t.cur.x = t.tabs.next(t.cur.x, n, t.cols)
	case 'Z':
		t.cur.x = t.tabs.next(t.cur.x, -n, t.cols)
	case 'J':
		t.eraseDisplay(paramsOr(params, 0))
	case 'K':
		t.eraseLine(paramsOr(params, 0))
	case 'L':
		t.endPendingWrap() // outside the region too, as xterm
		if t.cur.y >= t.top && t.cur.y <= t.bottom {
			t.insertLines(n)
			t.cur.x = 0
		}
	case 'M':
		t.endPendingWrap()
		if t.cur.y >= t.top && t.cur.y <= t.bottom {
			t.deleteLines(n)
			t.cur.x = 0
		}
	case '@':
		t.endPendingWrap()
		t.scr.line(t.cur.y).insertCells(t.cur.x, n, t.cols, t.blank())
	case 'P':
		t.endPendingWrap()
		t.scr.line(t.cur.y).deleteCells(t.cur.x, n, t.cols, t.blank())
	case 'X':
		t.endPendingWrap()
		x := t.cur.x
		l := t.scr.line(t.cur.y)
		end := min(x+n, t.cols)
		l.fixWide(x, end-x)
		l.clear(x, end, t.blank())
	case 'S':
		t.scrollUp(n)
	case 'T':
		t.scrollDown(n)
	case 'b':
		if t.lastRune != 0 {
			for range min(n, t.cols*t.rows) {
				t.printRune(t.lastRune)
			}
		}
	case 'c':
		in.send("\x1b[?1;2c")
	case ansi.Cmd(ansi.Command('>', 0, 'c')):
		in.send("\x1b[>84;0;0c")
	case 'd':
		t.moveTo(t.cur.x, n-1)
	case 'g':
		switch paramsOr(params, 0) {
		case 0:
			if t.cur.x < t.cols {
				t.tabs[t.cur.x] = false
			}
		case 3:
			clear(t.tabs)
		}
	case 'h', 'l':
		in.setANSIMode(params, cmd == 'h')
	case ansi.Cmd(ansi.Command('?', 0, 'h')), ansi.Cmd(ansi.Command('?', 0, 'l')):
		for _, p := range params {
			in.setDECMode(p.Param(0), cmd.Final() == 'h')
		}
	case 'm':
		s := t.cur.style
		applySGR(&s, params)
		t.setStyle(s)
	case 'n':
		switch paramsOr(params, 0) {
		case 5:
			in.send("\x1b[0n")
		case 6:
			in.send("\x1b[" + strconv.Itoa(t.cur.y+1) + ";" + strconv.Itoa(min(t.cur.x, t.cols-1)+1) + "R")
		}
	case 'r':
		top, bottom := param(params, 0, 1)-1, param(params, 1, t.rows)-1
		bottom = min(bottom, t.rows-1)
		if top < bottom {
			t.top, t.bottom = top, bottom
			t.moveTo(0, 0)
		}
	case 's':
		t.saved = t.cur
	case 'u':
		t.restoreCursor(t.saved)
	case ansi.Cmd(ansi.Command(0, '!', 'p')):
		t.softReset()
	}
}

func (in *input) send(s string) {
	if in.reply != nil {
		in.reply([]byte(s))
	}
}

func (in *input) setANSIMode(params ansi.Params, on bool) {
	t := in.t
	for _, p := range params {
		if p.Param(0) == 4 {
			t.insert = on
		}
	}
}

func (in *input) setDECMode(m int, on bool) {
	t := in.t
	switch m {
	case 1:
		t.modes.AppCursor = on
	case 6:
		t.cur.origin = on
		t.moveTo(0, 0)
	case 7:
		t.autowrap = on
	case 25:
		t.cursorHidden = !on
	case 9, 1000, 1002, 1003:
		if on {
			t.modes.Mouse = m
		} else {
			t.modes.Mouse = 0
		}
	case 1004:
		t.modes.FocusEvents = on
	case 1005, 1006, 1015:
		if on {
			t.modes.MouseEncoding = m
		} else {
			t.modes.MouseEncoding = 0
		}
	case 2004:
		t.modes.BracketedPaste = on
	case 1048:
		if on {
			t.saved = t.cur
		} else {
			t.restoreCursor(t.saved)
		}
	case 47, 1047, 1049:
		if on {
			t.altOn(m == 1049)
		} else {
			t.altOff(m == 1049)
		}
	}
}

func (in *input) esc(cmd ansi.Cmd) {
	t := in.t
	switch cmd {
	case '7':
		t.saved = t.cur
	case '8':
		t.restoreCursor(t.saved)
	case 'D':
		t.linefeed()
		t.endPendingWrap()
	case 'E':
		t.linefeed()
		t.cur.x = 0
	case 'M':
		t.reverseIndex()
	case 'H':
		if t.cur.x < t.cols {
			t.tabs[t.cur.x] = true
		}
	case 'c':
		t.altOff(false)
		t.reset()
		t.setStyle(Style{})
		t.eraseDisplay(2)
		in.title = ""
	case '=':
		t.modes.AppKeypad = true
	case '>':
		t.modes.AppKeypad = false
	case ansi.Cmd(ansi.Command(0, '(', '0')), ansi.Cmd(ansi.Command(0, '(', 'B')):
		t.cur.charset[0] = cmd.Final()
	case ansi.Cmd(ansi.Command(0, ')', '0')), ansi.Cmd(ansi.Command(0, ')', 'B')):
		t.cur.charset[1] = cmd.Final()
	case ansi.Cmd(ansi.Command(0, '#', '8')):
		t.top, t.bottom = 0, t.rows-1
		for y := range t.rows {
			t.scr.line(y).clear(0, t.cols, Cell{R: 'E', Width: 1})
			t.scr.line(y).wrote(t.cols)
		}
		t.moveTo(0, 0)
	}
}

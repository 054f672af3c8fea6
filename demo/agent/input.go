package agent

import (
	"strings"
	"unicode/utf8"
)

// Bracketed paste markers (xterm mode 2004) and the sequences that turn the
// mode on and off.
const (
	pasteStart        = "\x1b[200~"
	pasteEnd          = "\x1b[201~"
	enableBracketed   = "\x1b[?2004h"
	disableBracketed  = "\x1b[?2004l"
	keyCtrlC          = 0x03
	keyCtrlD          = 0x04
	keyBackspace      = 0x7f
	keyCtrlH          = 0x08
	keyEsc            = 0x1b
	keySubmit         = '\r'
	keyNewline        = '\n'
	keyTab            = '\t'
	maxEscapeSequence = 32
)

// inputKind tells what an inputEvent is.
type inputKind int

const (
	// inEcho: typed bytes the program should show at its prompt.
	inEcho inputKind = iota
	// inErase: one typed rune was erased.
	inErase
	// inPasted: a paste ended; lines says how many lines it held.
	inPasted
	// inSubmit: the submit key was pressed; text is the message.
	inSubmit
	// inInterrupt: ctrl-c.
	inInterrupt
	// inEOF: ctrl-d at an empty prompt.
	inEOF
)

// inputEvent is one thing the input parser saw.
type inputEvent struct {
	kind  inputKind
	text  string // inEcho: the bytes; inSubmit and inPasted: the message so far
	lines int    // inPasted: lines in the paste
}

// inputParser turns raw tty bytes into prompt events, as an agent CLI in raw
// mode sees them: typed keys, bracketed pastes (whose "\r" and "\n" are
// content, not submits), escape sequences (ignored: arrows and the like) and
// the submit key. It is fed in arbitrary chunks; sequences split across
// reads are handled.
type inputParser struct {
	msg     []byte // the message being composed
	esc     []byte // an escape sequence in progress
	inPaste bool
	pasteAt int  // offset in msg where the current paste began
	lastCR  bool // the previous byte was "\r" (so a following "\n" is one newline)
}

// feed consumes data and returns the events it completes.
func (p *inputParser) feed(data []byte) []inputEvent {
	var evs []inputEvent
	var echo []byte
	flush := func() {
		if len(echo) > 0 {
			evs = append(evs, inputEvent{kind: inEcho, text: string(echo)})
			echo = nil
		}
	}
	for _, c := range data {
		if len(p.esc) > 0 {
			p.esc = append(p.esc, c)
			if done := p.escapeDone(); !done {
				continue
			}
			seq := string(p.esc)
			p.esc = nil
			switch {
			case seq == pasteStart && !p.inPaste:
				p.inPaste, p.pasteAt = true, len(p.msg)
			case seq == pasteEnd && p.inPaste:
				p.inPaste = false
				flush()
				evs = append(evs, inputEvent{kind: inPasted, text: string(p.msg), lines: strings.Count(string(p.msg[p.pasteAt:]), "\n") + 1})
			case p.inPaste:
				// Pasted text may carry escape sequences; they are content.
				p.msg = append(p.msg, seq...)
			}
			continue
		}
		if c == keyEsc {
			p.esc = append(p.esc, c)
			continue
		}
		wasCR := p.lastCR
		p.lastCR = c == keySubmit
		if p.inPaste {
			// Terminals paste newlines as "\r"; keep them as "\n".
			switch {
			case c == keySubmit:
				p.msg = append(p.msg, '\n')
			case c == keyNewline && wasCR:
			default:
				p.msg = append(p.msg, c)
			}
			continue
		}
		switch {
		case c == keySubmit || (c == keyNewline && !wasCR):
			flush()
			evs = append(evs, inputEvent{kind: inSubmit, text: string(p.msg)})
			p.msg = nil
		case c == keyNewline:
			// The "\n" of a "\r\n" already submitted.
		case c == keyCtrlC:
			flush()
			evs = append(evs, inputEvent{kind: inInterrupt})
		case c == keyCtrlD:
			if len(p.msg) == 0 {
				flush()
				evs = append(evs, inputEvent{kind: inEOF})
			}
		case c == keyBackspace || c == keyCtrlH:
			flush()
			if len(p.msg) > 0 {
				_, size := utf8.DecodeLastRune(p.msg)
				p.msg = p.msg[:len(p.msg)-size]
				evs = append(evs, inputEvent{kind: inErase})
			}
		case c == keyTab || c >= 0x20:
			p.msg = append(p.msg, c)
			echo = append(echo, c)
		}
	}
	flush()
	return evs
}

// escapeDone reports whether p.esc holds a complete escape sequence: a CSI
// ends with a byte in 0x40..0x7e, an SS3 with the byte after "O", and any
// other ESC pair with its second byte. Overlong sequences are cut off.
func (p *inputParser) escapeDone() bool {
	n := len(p.esc)
	if n < 2 {
		return false
	}
	if n >= maxEscapeSequence {
		return true
	}
	switch p.esc[1] {
	case '[':
		return n > 2 && p.esc[n-1] >= 0x40 && p.esc[n-1] <= 0x7e
	case 'O':
		return n == 3
	default:
		return true
	}
}

package ui

import (
	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/vt"
)

// modes returns the input modes of the task's program; a view that
// cannot tell is taken to want bracketed pastes and normal cursor keys.
func (pg *paneGrid) modes(id task.ID) vt.Modes {
	if v, ok := pg.pane(id); ok {
		if r, ok := v.(session.ModeReporter); ok {
			return r.Modes()
		}
	}
	return vt.Modes{BracketedPaste: true}
}

// Bracketed paste markers: an agent that enabled bracketed paste treats what
// is between them as one pasted block rather than typed keys.
const (
	pasteStart = "\x1b[200~"
	pasteEnd   = "\x1b[201~"
)

// specialKeys are the bytes a VT-style terminal sends for keys that have no
// text, in normal (not application) cursor mode.
var specialKeys = map[rune]string{
	tea.KeyEnter:     "\r",
	tea.KeyTab:       "\t",
	tea.KeyBackspace: "\x7f",
	tea.KeyEscape:    "\x1b",
	tea.KeySpace:     " ",
	tea.KeyUp:        "\x1b[A",
	tea.KeyDown:      "\x1b[B",
	tea.KeyRight:     "\x1b[C",
	tea.KeyLeft:      "\x1b[D",
	tea.KeyHome:      "\x1b[H",
	tea.KeyEnd:       "\x1b[F",
	tea.KeyInsert:    "\x1b[2~",
	tea.KeyDelete:    "\x1b[3~",
	tea.KeyPgUp:      "\x1b[5~",
	tea.KeyPgDown:    "\x1b[6~",
	tea.KeyF1:        "\x1bOP",
	tea.KeyF2:        "\x1bOQ",
	tea.KeyF3:        "\x1bOR",
	tea.KeyF4:        "\x1bOS",
	tea.KeyF5:        "\x1b[15~",
	tea.KeyF6:        "\x1b[17~",
	tea.KeyF7:        "\x1b[18~",
	tea.KeyF8:        "\x1b[19~",
	tea.KeyF9:        "\x1b[20~",
	tea.KeyF10:       "\x1b[21~",
	tea.KeyF11:       "\x1b[23~",
	tea.KeyF12:       "\x1b[24~",
}

// keyBytes translates a key press into the bytes a terminal would send to
// the program running in it, so focus mode types exactly what the operator
// would type in a plain terminal. Unknown keys yield nothing.
func keyBytes(k tea.KeyPressMsg) []byte {
	var prefix string
	if k.Mod.Contains(tea.ModAlt) {
		prefix = "\x1b" // meta sends ESC before the key
	}
	if k.Mod.Contains(tea.ModCtrl) {
		if b, ok := ctrlByte(k.Code); ok {
			return []byte(prefix + string(rune(b)))
		}
	}
	if k.Code == tea.KeyTab && k.Mod.Contains(tea.ModShift) {
		return []byte(prefix + "\x1b[Z")
	}
	if s, ok := specialKeys[k.Code]; ok {
		return []byte(prefix + s)
	}
	if k.Text != "" {
		return []byte(prefix + k.Text)
	}
	if k.Code > 0 && k.Code < tea.KeyExtended {
		return []byte(prefix + string(k.Code))
	}
	return nil
}

// appCursorKeys replace the arrows, Home and End when the program turned on
// application cursor mode (DECCKM), as a terminal does.
var appCursorKeys = map[rune]string{
	tea.KeyUp: "\x1bOA", tea.KeyDown: "\x1bOB", tea.KeyRight: "\x1bOC", tea.KeyLeft: "\x1bOD",
	tea.KeyHome: "\x1bOH", tea.KeyEnd: "\x1bOF",
}

// keyBytesIn is keyBytes in the program's input modes.
func keyBytesIn(k tea.KeyPressMsg, m vt.Modes) []byte {
	if s, ok := appCursorKeys[k.Code]; ok && m.AppCursor && k.Mod == 0 {
		return []byte(s)
	}
	return keyBytes(k)
}

// pasteBytesIn is pasteBytes for a program that enabled bracketed paste;
// for one that did not, the text goes as typed, since the markers would
// arrive as literal keys.
func pasteBytesIn(s string, m vt.Modes) []byte {
	if !m.BracketedPaste {
		return []byte(s)
	}
	return pasteBytes(s)
}

// ctrlByte is the C0 control a terminal sends for ctrl plus a key.
func ctrlByte(r rune) (byte, bool) {
	switch {
	case r >= 'a' && r <= 'z':
		return byte(r-'a') + 1, true
	case r >= 'A' && r <= 'Z':
		return byte(r-'A') + 1, true
	}
	switch r {
	case '@', ' ', '2':
		return 0x00, true
	case '[', '3':
		return 0x1b, true
	case '\\', '4':
		return 0x1c, true
	case ']', '5':
		return 0x1d, true
	case '^', '6':
		return 0x1e, true
	case '_', '-', '7':
		return 0x1f, true
	case '?', '8':
		return 0x7f, true
	}
	return 0, false
}

// pasteBytes wraps pasted text in bracketed-paste markers, after removing
// any end marker inside it so the paste cannot end early and run the rest
// as typed keys.
func pasteBytes(s string) []byte {
	clean := []byte{}
	for i := 0; i < len(s); {
		if len(s)-i >= len(pasteEnd) && s[i:i+len(pasteEnd)] == pasteEnd {
			i += len(pasteEnd)
			continue
		}
		clean = append(clean, s[i])
		i++
	}
	return append(append([]byte(pasteStart), clean...), pasteEnd...)
}

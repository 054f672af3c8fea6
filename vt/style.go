package vt

import (
	"image/color"
	"strconv"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
)

// Color is a cell colour packed in 32 bits: the top byte says which kind
// (default, one of the 256 palette entries, or 24-bit RGB) and the low 24
// bits hold the index or the RGB value. Packing keeps a style comparable, so
// it can be a map key for interning.
type Color uint32

const (
	colorDefault Color = 0
	colorIndexed Color = 1 << 24
	colorRGB     Color = 2 << 24
	colorKind    Color = 0xff << 24
)

// Indexed returns palette colour n (0-255).
func Indexed(n uint8) Color { return colorIndexed | Color(n) }

// RGB returns a 24-bit colour.
func RGB(r, g, b uint8) Color { return colorRGB | Color(r)<<16 | Color(g)<<8 | Color(b) }

// IsDefault reports whether c is the terminal's default colour.
func (c Color) IsDefault() bool { return c == colorDefault }

// Index returns the palette index and true for a palette colour.
func (c Color) Index() (uint8, bool) { return uint8(c), c&colorKind == colorIndexed }

// RGBValues returns the components and true for a 24-bit colour.
func (c Color) RGBValues() (r, g, b uint8, ok bool) {
	return uint8(c >> 16), uint8(c >> 8), uint8(c), c&colorKind == colorRGB
}

// color converts to the image/color value ultraviolet and ansi expect.
func (c Color) color() color.Color {
	switch c & colorKind {
	case colorIndexed:
		if c&0xff < 16 {
			return ansi.BasicColor(uint8(c))
		}
		return ansi.IndexedColor(uint8(c))
	case colorRGB:
		return color.RGBA{R: uint8(c >> 16), G: uint8(c >> 8), B: uint8(c), A: 0xff}
	}
	return nil
}

// Attributes of a style, one bit each.
const (
	AttrBold uint16 = 1 << iota
	AttrFaint
	AttrItalic
	AttrBlink
	AttrRapidBlink
	AttrReverse
	AttrHidden
	AttrStrike
	AttrOverline
)

// Style is what a cell looks like besides its character. Styles are
// interned per terminal, so a cell holds a 32-bit id instead.
type Style struct {
	Fg, Bg, Ul Color
	Attrs      uint16
	// Underline is an ansi.Underline value (none, single, double, curly...).
	Underline uint8
}

// styleTable interns styles: id 0 is always the default style.
type styleTable struct {
	list []Style
	ids  map[Style]uint32
	uv   []*uv.Style // converted lazily for drawing
	// recent caches the last styles interned: programs switch between a
	// handful of styles, and a map lookup per SGR shows in profiles.
	recent [4]uint32
	next   int
}

func newStyleTable() *styleTable {
	t := &styleTable{ids: make(map[Style]uint32)}
	t.add(Style{})
	return t
}

func (t *styleTable) intern(s Style) uint32 {
	for _, id := range t.recent {
		if t.list[id] == s {
			return id
		}
	}
	id, ok := t.ids[s]
	if !ok {
		id = t.add(s)
	}
	t.recent[t.next] = id
	t.next = (t.next + 1) % len(t.recent)
	return id
}

// reset empties the table but keeps its memory, leaving the default style.
func (t *styleTable) reset() {
	t.list, t.uv = t.list[:0], t.uv[:0]
	clear(t.ids)
	t.recent, t.next = [4]uint32{}, 0
	t.add(Style{})
}

func (t *styleTable) add(s Style) uint32 {
	id := uint32(len(t.list))
	t.list = append(t.list, s)
	t.uv = append(t.uv, nil)
	t.ids[s] = id
	return id
}

// uvStyle returns the ultraviolet form of style id, converting it once.
func (t *styleTable) uvStyle(id uint32) *uv.Style {
	if p := t.uv[id]; p != nil {
		return p
	}
	s := t.list[id]
	u := &uv.Style{Fg: s.Fg.color(), Bg: s.Bg.color(), UnderlineColor: s.Ul.color(), Underline: ansi.Underline(s.Underline)}
	for _, m := range [...]struct {
		a uint16
		u uint8
	}{{AttrBold, uv.AttrBold}, {AttrFaint, uv.AttrFaint}, {AttrItalic, uv.AttrItalic}, {AttrBlink, uv.AttrBlink},
		{AttrRapidBlink, uv.AttrRapidBlink}, {AttrReverse, uv.AttrReverse}, {AttrHidden, uv.AttrConceal}, {AttrStrike, uv.AttrStrikethrough}} {
		if s.Attrs&m.a != 0 {
			u.Attrs |= m.u
		}
	}
	t.uv[id] = u
	return u
}

// applySGR updates s from an SGR sequence's parameters, as xterm and tmux do.
func applySGR(s *Style, params ansi.Params) {
	if len(params) == 0 {
		*s = Style{}
		return
	}
	for i := 0; i < len(params); i++ {
		p := params[i].Param(0)
		switch {
		case p == 0:
			*s = Style{}
		case p == 1:
			s.Attrs |= AttrBold
		case p == 2:
			s.Attrs |= AttrFaint
		case p == 3:
			s.Attrs |= AttrItalic
		case p == 4:
			u := uint8(ansi.UnderlineSingle)
			if params[i].HasMore() && i+1 < len(params) {
				i++
				u = uint8(params[i].Param(0))
				if u > uint8(ansi.UnderlineDashed) {
					u = uint8(ansi.UnderlineSingle)
				}
			}
			s.Underline = u
		case p == 5:
			s.Attrs |= AttrBlink
		case p == 6:
			s.Attrs |= AttrRapidBlink
		case p == 7:
			s.Attrs |= AttrReverse
		case p == 8:
			s.Attrs |= AttrHidden
		case p == 9:
			s.Attrs |= AttrStrike
		case p == 21:
			s.Underline = uint8(ansi.UnderlineDouble)
		case p == 22:
			s.Attrs &^= AttrBold | AttrFaint
		case p == 23:
			s.Attrs &^= AttrItalic
		case p == 24:
			s.Underline = 0
		case p == 25:
			s.Attrs &^= AttrBlink | AttrRapidBlink
		case p == 27:
			s.Attrs &^= AttrReverse
		case p == 28:
			s.Attrs &^= AttrHidden
		case p == 29:
			s.Attrs &^= AttrStrike
		case p >= 30 && p <= 37:
			s.Fg = Indexed(uint8(p - 30))
		case p == 38, p == 48, p == 58:
			c, n := extColor(params[i:])
			i += n
			switch p {
			case 38:
				s.Fg = c
			case 48:
				s.Bg = c
			default:
				s.Ul = c
			}
		case p == 39:
			s.Fg = colorDefault
		case p >= 40 && p <= 47:
			s.Bg = Indexed(uint8(p - 40))
		case p == 49:
			s.Bg = colorDefault
		case p == 53:
			s.Attrs |= AttrOverline
		case p == 55:
			s.Attrs &^= AttrOverline
		case p == 59:
			s.Ul = colorDefault
		case p >= 90 && p <= 97:
			s.Fg = Indexed(uint8(p - 90 + 8))
		case p >= 100 && p <= 107:
			s.Bg = Indexed(uint8(p - 100 + 8))
		}
	}
}

// extColor reads the colour after a 38/48/58 parameter, in either the
// semicolon form (38;5;n, 38;2;r;g;b) or the colon form (38:5:n,
// 38:2::r:g:b). It returns the colour and how many parameters it used after
// the first.
func extColor(params ansi.Params) (Color, int) {
	if len(params) < 2 {
		return colorDefault, len(params) - 1
	}
	colon := params[0].HasMore()
	switch params[1].Param(0) {
	case 5:
		if len(params) < 3 {
			return colorDefault, len(params) - 1
		}
		return Indexed(uint8(min(params[2].Param(0), 255))), 2
	case 2:
		// The colon form may carry a colour space id before r:g:b.
		vals := params[2:]
		used := 1
		if colon {
			n := 0
			for n < len(vals) && (n == 0 || vals[n-1].HasMore()) {
				n++
			}
			vals = vals[:n]
			used += n
			if len(vals) >= 4 {
				vals = vals[1:]
			}
		} else {
			used += min(3, len(vals))
		}
		if len(vals) < 3 {
			return colorDefault, used
		}
		c := func(p ansi.Param) uint8 { return uint8(min(max(p.Param(0), 0), 255)) }
		return RGB(c(vals[0]), c(vals[1]), c(vals[2])), used
	}
	return colorDefault, 1
}

// appendSGR appends the SGR sequence that sets s from a reset state.
func appendSGR(b []byte, s Style) []byte {
	b = append(b, "\x1b[0"...)
	for _, a := range [...]struct {
		bit  uint16
		code string
	}{{AttrBold, "1"}, {AttrFaint, "2"}, {AttrItalic, "3"}, {AttrBlink, "5"}, {AttrRapidBlink, "6"},
		{AttrReverse, "7"}, {AttrHidden, "8"}, {AttrStrike, "9"}, {AttrOverline, "53"}} {
		if s.Attrs&a.bit != 0 {
			b = append(b, ';')
			b = append(b, a.code...)
		}
	}
	switch s.Underline {
	case 0:
	case 1:
		b = append(b, ";4"...)
	default:
		b = append(b, ";4:"...)
		b = strconv.AppendInt(b, int64(s.Underline), 10)
	}
	b = appendColor(b, s.Fg, 30, 90, "38")
	b = appendColor(b, s.Bg, 40, 100, "48")
	if !s.Ul.IsDefault() {
		b = appendColor(b, s.Ul, -1, -1, "58")
	}
	return append(b, 'm')
}

func appendColor(b []byte, c Color, base, bright int, ext string) []byte {
	if n, ok := c.Index(); ok {
		switch {
		case n < 8 && base >= 0:
			b = append(b, ';')
			return strconv.AppendInt(b, int64(base+int(n)), 10)
		case n < 16 && bright >= 0:
			b = append(b, ';')
			return strconv.AppendInt(b, int64(bright+int(n)-8), 10)
		}
		b = append(b, ';')
		b = append(b, ext...)
		b = append(b, ";5;"...)
		return strconv.AppendInt(b, int64(n), 10)
	}
	if r, g, bl, ok := c.RGBValues(); ok {
		b = append(b, ';')
		b = append(b, ext...)
		b = append(b, ";2;"...)
		b = strconv.AppendInt(b, int64(r), 10)
		b = append(b, ';')
		b = strconv.AppendInt(b, int64(g), 10)
		b = append(b, ';')
		return strconv.AppendInt(b, int64(bl), 10)
	}
	return b
}

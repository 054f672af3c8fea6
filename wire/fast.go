package wire

import (
	"strconv"
	"unicode/utf8"
)

// The screen's rows are most of what a session host and an engine send:
// tens of rows of styled text a frame, each escape sequence a \u001b in
// JSON. encoding/json scans such a message three times to read it (once
// to check it, once per value, once to unquote) and reflects over it
// to write it; the pane frames' codecs (host and engine) write and read
// it with the functions here instead, in one pass, as the same JSON: a
// peer that decodes with encoding/json reads it unchanged.

// AppendString appends s as a JSON string, as encoding/json writes it
// but for HTML characters, which are left as they are (a JSON reader
// takes either): control characters as \u00XX (or \n, \r, \t), invalid
// UTF-8 as U+FFFD.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// AppendKey appends "key": after a comma unless b ends an opening brace.
func AppendKey(b []byte, key string) []byte {
	if len(b) > 0 && b[len(b)-1] != '{' && b[len(b)-1] != '[' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, key...)
	return append(b, '"', ':')
}

// AppendUint appends "key":n unless n is 0 (omitempty).
func AppendUint(b []byte, key string, n uint64) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendUint(AppendKey(b, key), n, 10)
}

// AppendInt appends "key":n unless n is 0 (omitempty).
func AppendInt(b []byte, key string, n int) []byte {
	if n == 0 {
		return b
	}
	return strconv.AppendInt(AppendKey(b, key), int64(n), 10)
}

// AppendTrue appends "key":true when v (omitempty).
func AppendTrue(b []byte, key string, v bool) []byte {
	if !v {
		return b
	}
	return append(AppendKey(b, key), "true"...)
}

// AppendText appends "key":"s" unless s is empty (omitempty).
func AppendText(b []byte, key, s string) []byte {
	if s == "" {
		return b
	}
	return AppendString(AppendKey(b, key), s)
}

// Dec reads JSON in one pass, for the codecs of the pane frames: objects,
// arrays, strings, integers and booleans. Whatever it does not expect
// makes it Bad, and its caller reads the message with encoding/json.
type Dec struct {
	b   []byte
	i   int
	bad bool
}

// NewDec reads b.
func NewDec(b []byte) *Dec { return &Dec{b: b} }

// Bad reports whether the input was not what the reader expected, or is
// not all read.
func (d *Dec) Bad() bool {
	d.ws()
	return d.bad || d.i != len(d.b)
}

// Fail marks the input as not what its reader expected.
func (d *Dec) Fail() { d.bad = true }

func (d *Dec) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *Dec) peek() byte {
	d.ws()
	if d.bad || d.i >= len(d.b) {
		d.bad = true
		return 0
	}
	return d.b[d.i]
}

// Null consumes a null and reports whether there was one.
func (d *Dec) Null() bool {
	if d.peek() == 'n' && len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

// Object reads an object, calling field with each key (its bytes, valid
// for the call); field reads the value (or calls Skip). A key with an
// escape makes the input Bad: no field of the frames has one.
func (d *Dec) Object(field func(key []byte)) {
	if d.Null() {
		return
	}
	if d.peek() != '{' {
		d.bad = true
		return
	}
	d.i++
	if d.peek() == '}' {
		d.i++
		return
	}
	for !d.bad {
		k := d.key()
		if d.peek() != ':' {
			d.bad = true
			return
		}
		d.i++
		field(k)
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			return
		default:
			d.bad = true
		}
	}
}

// Array reads an array, calling elem for each element, which reads it.
func (d *Dec) Array(elem func()) {
	if d.Null() {
		return
	}
	if d.peek() != '[' {
		d.bad = true
		return
	}
	d.i++
	if d.peek() == ']' {
		d.i++
		return
	}
	for !d.bad {
		elem()
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			return
		default:
			d.bad = true
		}
	}
}

func (d *Dec) key() []byte {
	if d.peek() != '"' {
		d.bad = true
		return nil
	}
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return d.b[start:j]
		case c == '\\' || c < 0x20:
			d.bad = true
			return nil
		}
	}
	d.bad = true
	return nil
}

// String reads a string.
func (d *Dec) String() string {
	if d.peek() != '"' {
		d.bad = true
		return ""
	}
	d.i++
	start := d.i
	for d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '"':
			s := string(d.b[start:d.i])
			d.i++
			return s
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			d.bad = true
			return ""
		}
		d.i++
	}
	d.bad = true
	return ""
}

// escaped reads the rest of a string that has an escape at d.i.
func (d *Dec) escaped(start int) string {
	out := make([]byte, 0, d.i-start+64)
	out = append(out, d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(out)
		case c < 0x20:
			d.bad = true
			return ""
		case c != '\\':
			j := d.i
			for j < len(d.b) && d.b[j] != '"' && d.b[j] != '\\' && d.b[j] >= 0x20 {
				j++
			}
			out = append(out, d.b[d.i:j]...)
			d.i = j
			continue
		}
		if d.i+1 >= len(d.b) {
			d.bad = true
			return ""
		}
		e := d.b[d.i+1]
		d.i += 2
		switch e {
		case '"', '\\', '/':
			out = append(out, e)
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return ""
			}
			if r >= 0xd800 && r < 0xdc00 {
				// A surrogate pair, or U+FFFD as encoding/json reads
				// a lone one.
				if d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
					save := d.i
					d.i += 2
					r2, ok := d.hex4()
					if !ok {
						return ""
					}
					if r2 >= 0xdc00 && r2 < 0xe000 {
						r = (r-0xd800)<<10 | (r2 - 0xdc00) + 0x10000
					} else {
						r, d.i = utf8.RuneError, save
					}
				} else {
					r = utf8.RuneError
				}
			} else if r >= 0xdc00 && r < 0xe000 {
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default:
			d.bad = true
			return ""
		}
	}
	d.bad = true
	return ""
}

func (d *Dec) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		d.bad = true
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			d.bad = true
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r, true
}

// Uint reads a non-negative integer.
func (d *Dec) Uint() uint64 {
	d.peek()
	j := d.i
	for j < len(d.b) && d.b[j] >= '0' && d.b[j] <= '9' {
		j++
	}
	n, err := strconv.ParseUint(string(d.b[d.i:j]), 10, 64)
	if err != nil {
		d.bad = true
	}
	d.i = j
	return n
}

// Int reads an integer.
func (d *Dec) Int() int {
	neg := d.peek() == '-'
	if neg {
		d.i++
	}
	n := d.Uint()
	if n > 1<<62 {
		d.bad = true
	}
	if neg {
		return -int(n)
	}
	return int(n)
}

// Bool reads true or false.
func (d *Dec) Bool() bool {
	switch d.peek() {
	case 't':
		if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "true" {
			d.i += 4
			return true
		}
	case 'f':
		if len(d.b)-d.i >= 5 && string(d.b[d.i:d.i+5]) == "false" {
			d.i += 5
			return false
		}
	}
	d.bad = true
	return false
}

// Raw reads any value and returns its bytes, for a caller to decode with
// encoding/json (a small nested value: the terminal's modes).
func (d *Dec) Raw() []byte {
	start := d.i
	d.Skip()
	if d.bad {
		return nil
	}
	return d.b[start:d.i]
}

// Skip reads any value.
func (d *Dec) Skip() {
	switch c := d.peek(); {
	case c == '{':
		d.Object(func([]byte) { d.Skip() })
	case c == '[':
		d.Array(d.Skip)
	case c == '"':
		_ = d.String()
	case c == 't' || c == 'f':
		d.Bool()
	case c == 'n':
		if !d.Null() {
			d.bad = true
		}
	case c == '-' || c >= '0' && c <= '9':
		j := d.i + 1
		for j < len(d.b) && (d.b[j] >= '0' && d.b[j] <= '9' || d.b[j] == '.' || d.b[j] == 'e' || d.b[j] == 'E' || d.b[j] == '+' || d.b[j] == '-') {
			j++
		}
		d.i = j
	default:
		d.bad = true
	}
}

// PushRaw sends a message whose body is b, JSON its caller wrote.
func (c *Conn) PushRaw(op string, id uint64, b []byte) error {
	head := make([]byte, 0, 48+len(b))
	head = append(head, '{')
	if id != 0 {
		head = append(head, `"id":`...)
		head = strconv.AppendUint(head, id, 10)
		head = append(head, ',')
	}
	head = append(head, `"op":`...)
	head = strconv.AppendQuote(head, op)
	head = append(head, `,"body":`...)
	head = append(head, b...)
	head = append(head, '}', '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.w.Write(head)
	return err
}

package vt

import (
	"encoding/binary"
	"unicode/utf8"
)

// history keeps the lines that scrolled off the top, oldest first, at most
// limit of them. A line is stored compactly, not as cells: its style runs
// as varints (count, then style id and byte length of each run) followed
// by its text as UTF-8 without trailing blanks, about the size of the text
// itself. The encodings live one after another in a byte ring, so pushing a
// line allocates nothing once the ring has grown to the history's size,
// and the garbage collector sees one buffer per pane, not one per line.
type history struct {
	buf     []byte
	head    int // where the next encoding goes
	ents    []hent
	start   int // index in ents of the oldest line
	n       int
	limit   int
	scratch []byte
	text    []byte
	runs    []run
}

// hent locates one line's encoding in the ring.
type hent struct {
	off, size uint32
	used      uint16 // the line's written cells (line.used)
	wrapped   bool
}

func (h *history) len() int { return h.n }

func (h *history) ent(i int) *hent {
	j := h.start + i
	if j >= len(h.ents) {
		j -= len(h.ents)
	}
	return &h.ents[j]
}

func (h *history) clear() { h.start, h.n, h.head = 0, 0, 0 }

func (h *history) dropOldest() {
	h.start++
	if h.start == len(h.ents) {
		h.start = 0
	}
	h.n--
}

// push appends l, encoded.
func (h *history) push(l *line, clusters []string) {
	if h.limit <= 0 {
		return
	}
	h.scratch, h.text, h.runs = encodeLine(h.scratch[:0], h.text, h.runs, l, clusters)
	h.pushEncoded(h.scratch, l.wrapped, l.used)
}

// pushEncoded appends a line already in the compact form.
func (h *history) pushEncoded(enc []byte, wrapped bool, used int) {
	if h.limit <= 0 {
		return
	}
	if h.n == h.limit {
		h.dropOldest()
	}
	off := h.place(len(enc))
	copy(h.buf[off:], enc)
	h.head = off + len(enc)
	if h.n == len(h.ents) {
		h.growEnts()
	}
	*h.ent(h.n) = hent{off: uint32(off), size: uint32(len(enc)), used: uint16(min(used, 1<<16-1)), wrapped: wrapped}
	h.n++
}

// place finds room for size bytes at the head of the ring, wrapping to the
// start when the end is too short, and growing the ring rather than losing
// lines the limit still allows.
func (h *history) place(size int) int {
	for {
		off := h.head
		if off+size > len(h.buf) {
			off = 0
		}
		if off+size <= len(h.buf) && !h.overlapsOldest(off, size) {
			return off
		}
		h.grow(size)
	}
}

func (h *history) overlapsOldest(off, size int) bool {
	if h.n == 0 {
		return false
	}
	// The lines run from the oldest's start forward (wrapping) to head;
	// the region is free unless it reaches into that span.
	o := h.ent(0)
	lo, hi := int(o.off), h.head
	if lo < hi || (lo == hi && h.n == 0) {
		// Not wrapped: live bytes are [lo, hi).
		return off < hi && off+size > lo
	}
	// Wrapped: live bytes are [lo, len) and [0, hi).
	return off+size > lo || off < hi
}

// grow re-lays the lines in a bigger ring, oldest at offset 0.
func (h *history) grow(need int) {
	used := 0
	for i := range h.n {
		used += int(h.ent(i).size)
	}
	size := max(64<<10, (used+need)*5/4, len(h.buf)*5/4)
	buf := make([]byte, size)
	off := 0
	for i := range h.n {
		e := h.ent(i)
		copy(buf[off:], h.buf[e.off:e.off+e.size])
		e.off = uint32(off)
		off += int(e.size)
	}
	h.buf, h.head = buf, off
}

// growEnts doubles the line index, up to the limit: never past it, as
// a slice cut to the limit would keep the doubled array (16,384 entries
// for the default 10,000).
func (h *history) growEnts() {
	n := max(1024, len(h.ents)*2)
	if h.limit > 0 {
		n = min(n, h.limit)
	}
	ents := make([]hent, n)
	for i := range h.n {
		ents[i] = *h.ent(i)
	}
	h.ents, h.start = ents, 0
}

// pop removes the newest line and decodes it into l (a resize pulling
// history back onto the screen).
func (h *history) pop(l *line, clusters []string) bool {
	if h.n == 0 {
		return false
	}
	e := *h.ent(h.n - 1)
	h.n--
	h.head = int(e.off)
	cols := len(l.cells)
	l.wrapped = e.wrapped
	l.used = int(e.used)
	l.cells = l.cells[:0]
	h.each(&e, clusters, func(c Cell, w int) {
		l.cells = append(l.cells, c)
		if w == 2 {
			l.cells = append(l.cells, Cell{Style: c.Style})
		}
	})
	for len(l.cells) < l.used {
		l.cells = append(l.cells, blankCell(0))
	}
	l.hidden = 0
	resizeLine(l, cols)
	return true
}

func (h *history) setLimit(n int) {
	n = max(n, 0)
	for h.n > n {
		h.dropOldest()
	}
	h.limit = n
}

// encodeLine appends the compact form of l to b, using text and runs as
// scratch (returned for reuse).
func encodeLine(b, text []byte, runs []run, l *line, clusters []string) ([]byte, []byte, []run) {
	cells := l.held()
	end := len(cells)
	for end > 0 && cells[end-1] == blankCell(0) {
		end--
	}
	text, runs = text[:0], runs[:0]
	st, start := uint32(0), 0
	for i, c := range cells[:end] {
		if c.Style != st || i == 0 {
			if len(text) > start {
				runs = append(runs, run{style: st, bytes: uint32(len(text) - start)})
			}
			st, start = c.Style, len(text)
		}
		switch {
		case c.R > 0 && c.R < utf8.RuneSelf:
			text = append(text, byte(c.R))
		case c.R == 0: // right half of a wide character
		case c.R < 0:
			text = append(text, clusters[-c.R-1]...)
		default:
			text = utf8.AppendRune(text, c.R)
		}
	}
	if len(text) > start {
		runs = append(runs, run{style: st, bytes: uint32(len(text) - start)})
	}
	b = binary.AppendUvarint(b, uint64(len(runs)))
	for _, r := range runs {
		b = binary.AppendUvarint(b, uint64(r.style))
		b = binary.AppendUvarint(b, uint64(r.bytes))
	}
	return append(b, text...), text, runs
}

// run is a stretch of a line's text in one style.
type run struct {
	style uint32
	bytes uint32
}

// each calls f for every character cell of line e, in order. Combining
// marks after a character belong to its cell; a cluster no longer in the
// table comes back as its first character.
func (h *history) each(e *hent, clusters []string, f func(c Cell, w int)) {
	eachEncoded(h.buf[e.off:e.off+e.size], clusters, f)
}

// eachEncoded is each for a line's compact form b.
func eachEncoded(b []byte, clusters []string, f func(c Cell, w int)) {
	nruns, k := binary.Uvarint(b)
	b = b[k:]
	runs := b
	// Skip over the runs to find the text.
	for range nruns {
		_, k1 := binary.Uvarint(b)
		_, k2 := binary.Uvarint(b[k1:])
		b = b[k1+k2:]
	}
	text := b
	for range nruns {
		st, k1 := binary.Uvarint(runs)
		n, k2 := binary.Uvarint(runs[k1:])
		runs = runs[k1+k2:]
		seg := text[:n]
		text = text[n:]
		for len(seg) > 0 {
			ch, size := utf8.DecodeRune(seg)
			w := runeWidth(ch)
			end := size
			for end < len(seg) {
				r2, s2 := utf8.DecodeRune(seg[end:])
				if runeWidth(r2) != 0 {
					break
				}
				end += s2
			}
			c := Cell{R: ch, Style: uint32(st), Width: uint8(max(w, 1))}
			if end > size {
				c.R = findCluster(clusters, seg[:end], ch)
			}
			f(c, max(w, 1))
			seg = seg[end:]
		}
	}
}

func findCluster(clusters []string, b []byte, first rune) rune {
	for i, s := range clusters {
		if s == string(b) {
			return rune(-(i + 1))
		}
	}
	return first
}

// encoded returns line e's compact form, which stays valid only until the
// history changes.
func (h *history) encoded(e *hent) []byte { return h.buf[e.off : e.off+e.size] }

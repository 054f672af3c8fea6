package verify

import (
	"bytes"
	"unicode/utf8"
)

// maxLine caps how much of one line the summary counter looks at. Summary
// lines are short; a pathological line with no newline must not grow memory.
const maxLine = 4096

// tailWriter keeps the last max bytes written to it in a ring and feeds
// every complete line to a counter, so memory stays bounded however much a
// command prints while the counts still cover all of it. It is used by one
// goroutine only (the pipe reader).
type tailWriter struct {
	ring  []byte // capacity max; once full, start marks the oldest byte
	start int
	full  bool
	total int64

	line     []byte // the current partial line, at most maxLine bytes
	overlong bool   // the current line passed maxLine and is being skipped
	count    counter
}

func newTailWriter(max int) *tailWriter {
	return &tailWriter{ring: make([]byte, 0, max), line: make([]byte, 0, 256)}
}

// Write never fails: a verify run must not be aborted by its own logging.
func (w *tailWriter) Write(p []byte) (int, error) {
	w.total += int64(len(p))
	w.keep(p)
	w.lines(p)
	return len(p), nil
}

func (w *tailWriter) keep(p []byte) {
	max := cap(w.ring)
	if max == 0 {
		return
	}
	if len(p) >= max {
		w.ring = append(w.ring[:0], p[len(p)-max:]...)
		w.start, w.full = 0, true
		return
	}
	if !w.full {
		room := max - len(w.ring)
		if len(p) <= room {
			w.ring = append(w.ring, p...)
			w.full = len(w.ring) == max
			return
		}
		w.ring = append(w.ring, p[:room]...)
		p = p[room:]
		w.full = true
	}
	// Overwrite the oldest bytes, wrapping once at most (len(p) < max).
	n := copy(w.ring[w.start:], p)
	if n < len(p) {
		copy(w.ring, p[n:])
	}
	w.start = (w.start + len(p)) % max
}

func (w *tailWriter) lines(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if !w.overlong {
			if len(w.line)+len(chunk) > maxLine {
				w.overlong = true
				w.line = w.line[:0]
			} else {
				w.line = append(w.line, chunk...)
			}
		}
		if i < 0 {
			return
		}
		if !w.overlong {
			w.count.line(w.line)
		}
		w.line, w.overlong = w.line[:0], false
		p = p[i+1:]
	}
}

// finish counts a last line that had no newline.
func (w *tailWriter) finish() {
	if len(w.line) > 0 && !w.overlong {
		w.count.line(w.line)
	}
	w.line = w.line[:0]
}

// tail returns the kept bytes in order, starting at a character boundary.
func (w *tailWriter) tail() string {
	var out []byte
	if w.full {
		out = make([]byte, 0, len(w.ring))
		out = append(out, w.ring[w.start:]...)
		out = append(out, w.ring[:w.start]...)
	} else {
		out = w.ring
	}
	if w.total > int64(len(out)) {
		// The cut may have split a character; drop its leftover bytes.
		for len(out) > 0 && !utf8.RuneStart(out[0]) {
			out = out[1:]
		}
	}
	return string(out)
}

package verify

import (
	"bytes"
	"unicode/utf8"
)

// maxLine caps how much of one line the summary counter looks at. Summary
// lines are short, but one line of go test -json carries a line of test
// output in it; a pathological line with no newline must not grow memory.
const maxLine = 64 << 10

// tailWriter keeps the last max bytes of output in a ring and feeds every
// complete line to a counter, so memory stays bounded however much a
// command prints while the counts still cover all of it. A line of go test
// -json is kept as the text it carries (what go test would have printed
// without -json), so the tail reads as test output, not as JSON. It is used
// by one goroutine only (the pipe reader).
type tailWriter struct {
	ring  []byte // capacity max; once full, start marks the oldest byte
	start int
	full  bool
	total int64 // bytes the command wrote
	kept  int64 // bytes passed to the ring

	line     []byte // the current partial line, at most maxLine bytes
	overlong bool   // the current line passed maxLine and is kept as it comes
	count    counter
}

func newTailWriter(max int) *tailWriter {
	return &tailWriter{ring: make([]byte, 0, max), line: make([]byte, 0, 256)}
}

// Write never fails: a verify run must not be aborted by its own logging.
func (w *tailWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.total += int64(n)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		switch {
		case w.overlong:
			w.keep(chunk)
		case len(w.line)+len(chunk) > maxLine:
			// Too long to be a summary or a JSON event: keep it raw and
			// do not count it.
			w.keep(w.line)
			w.keep(chunk)
			w.line, w.overlong = w.line[:0], true
		default:
			w.line = append(w.line, chunk...)
		}
		if i < 0 {
			break
		}
		if w.overlong {
			w.keep([]byte{'\n'})
		} else {
			w.endLine(w.line, true)
		}
		w.line, w.overlong = w.line[:0], false
		p = p[i+1:]
	}
	return n, nil
}

// endLine counts one complete line and keeps its text.
func (w *tailWriter) endLine(b []byte, newline bool) {
	if text, ok := w.count.goJSON(b); ok {
		w.keep(text)
		return
	}
	w.keep(b)
	if newline {
		w.keep([]byte{'\n'})
	}
	w.count.line(b)
}

func (w *tailWriter) keep(p []byte) {
	w.kept += int64(len(p))
	max := cap(w.ring)
	if max == 0 || len(p) == 0 {
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

// finish counts and keeps a last line that had no newline.
func (w *tailWriter) finish() {
	if len(w.line) > 0 && !w.overlong {
		w.endLine(w.line, false)
	}
	w.line, w.overlong = w.line[:0], false
}

// tail returns the kept bytes in order, with a line still being written
// at the end, starting at a character boundary.
func (w *tailWriter) tail() string {
	var out []byte
	if w.full {
		out = make([]byte, 0, len(w.ring)+len(w.line))
		out = append(out, w.ring[w.start:]...)
		out = append(out, w.ring[:w.start]...)
	} else {
		out = append(make([]byte, 0, len(w.ring)+len(w.line)), w.ring...)
	}
	out = append(out, w.line...)
	if max := cap(w.ring); len(out) > max {
		out = out[len(out)-max:]
	}
	if w.kept+int64(len(w.line)) > int64(len(out)) {
		// The cut may have split a character; drop its leftover bytes.
		for len(out) > 0 && !utf8.RuneStart(out[0]) {
			out = out[1:]
		}
	}
	return string(out)
}

package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"
)

// Header is the first line of an asciicast v2 file.
type Header struct {
	Version   int               `json:"version"`
	Width     int               `json:"width"`
	Height    int               `json:"height"`
	Timestamp int64             `json:"timestamp,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
	// StartNS is when the recording began, in Unix nanoseconds: Timestamp
	// has whole seconds only, too coarse to place the ledger's events on
	// the recording's clock (coord.Recording's marks). Players ignore it.
	StartNS int64 `json:"orchestra_start_ns,omitempty"`
}

// CastEvent is one event line of an asciicast v2 file.
type CastEvent struct {
	// Time is seconds since the start of the recording.
	Time float64
	// Code is "o" (output), "i" (input), "r" (resize, Data "COLSxROWS") or
	// "m" (marker).
	Code string
	// Data is the event's text.
	Data string
}

// castWriter appends events to an asciicast v2 file. It is safe for use by
// the output reader, the input writer and Resize at once.
//
// Each event is flushed as it is written: a read from the pty is already a
// system call, and one more write per chunk keeps a crash from losing the
// tail of a recording.
type castWriter struct {
	mu    sync.Mutex
	f     *os.File
	w     *bufio.Writer
	enc   *json.Encoder
	buf   bytes.Buffer
	start time.Time
	now   func() time.Time
	last  float64
	// carry holds, per event code, the bytes of a UTF-8 character split
	// across two chunks: JSON strings must be valid UTF-8, and writing the
	// halves apart would replace both with U+FFFD.
	carry map[string][]byte
	// joined is the carried bytes and the next chunk, reused.
	joined []byte
	err    error
	// max caps the file's size in bytes (0: no cap); written counts what
	// was written, and cut is set once the cap was reached and noted.
	max, written int64
	cut          bool
}

// createCast creates path and writes the header.
func createCast(path string, cols, rows int, env map[string]string, now func() time.Time) (*castWriter, error) {
	// A recording holds everything the agent printed, keys and tokens
	// included: readable by its owner only.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("create recording: %w", err)
	}
	c := &castWriter{f: f, w: bufio.NewWriterSize(f, 64<<10), start: now(), now: now, carry: map[string][]byte{}}
	c.enc = json.NewEncoder(&c.buf)
	c.enc.SetEscapeHTML(false)
	h := Header{Version: 2, Width: cols, Height: rows, Timestamp: c.start.Unix(), StartNS: c.start.UnixNano(), Env: env}
	if err := c.enc.Encode(h); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("write recording header: %w", err)
	}
	if _, err := c.w.Write(c.buf.Bytes()); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("write recording header: %w", err)
	}
	c.written = int64(c.buf.Len())
	c.buf.Reset()
	return c, c.w.Flush()
}

// event records data under code at the current time.
func (c *castWriter) event(code string, data []byte) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || c.f == nil || c.cut {
		return
	}
	if held := c.carry[code]; len(held) > 0 {
		c.joined = append(append(c.joined[:0], held...), data...)
		data = c.joined
	}
	data, rest := splitUTF8(data)
	c.carry[code] = append(c.carry[code][:0], rest...)
	if len(data) == 0 {
		return
	}
	// The bytes are only read while write encodes them, under mu: a view
	// of them as a string spares a flooding pane a copy of every read (and
	// the collector the garbage that would slow every other pane).
	c.write(code, unsafe.String(unsafe.SliceData(data), len(data)))
}

// write formats one event line; the caller holds mu.
func (c *castWriter) write(code, data string) {
	if c.cut {
		return // past the cap: the marker was the last event
	}
	t := c.now().Sub(c.start).Seconds()
	if t < c.last {
		t = c.last // the clock may step back; the file's times may not
	}
	c.last = t
	c.buf.Reset()
	c.buf.WriteByte('[')
	c.buf.WriteString(strconv.FormatFloat(t, 'f', 6, 64))
	c.buf.WriteString(`, "`)
	c.buf.WriteString(code)
	c.buf.WriteString(`", `)
	if err := c.enc.Encode(data); err != nil { // Encode appends "\n"
		c.err = err
		return
	}
	c.buf.Truncate(c.buf.Len() - 1)
	c.buf.WriteString("]\n")
	if c.max > 0 && c.written+int64(c.buf.Len()) > c.max {
		// A flooding pane must not fill the disk: past the cap the
		// recording ends with a marker saying where and why it was cut.
		c.cut = true
		line := fmt.Sprintf("[%s, \"m\", \"recording cut at %d bytes (limits.recording_bytes); the rest of the session was not recorded\"]\n",
			strconv.FormatFloat(t, 'f', 6, 64), c.written)
		c.buf.Reset()
		c.buf.WriteString(line)
	}
	c.written += int64(c.buf.Len())
	if _, err := c.w.Write(c.buf.Bytes()); err != nil {
		c.err = err
		return
	}
	c.err = c.w.Flush()
}

// resize records an "r" event.
func (c *castWriter) resize(cols, rows int) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil || c.f == nil {
		return
	}
	c.write("r", fmt.Sprintf("%dx%d", cols, rows))
}

// Close writes any held bytes, flushes and closes the file.
func (c *castWriter) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return c.err
	}
	for _, code := range []string{"o", "i"} {
		if held := c.carry[code]; len(held) > 0 && c.err == nil {
			c.write(code, string(held))
		}
	}
	err := errors.Join(c.err, c.w.Flush(), c.f.Close())
	c.f = nil
	if err != nil {
		return fmt.Errorf("close recording: %w", err)
	}
	return nil
}

// splitUTF8 splits p before a trailing incomplete UTF-8 sequence.
func splitUTF8(p []byte) (complete, rest []byte) {
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				return p[:i], p[i:]
			}
			break
		}
	}
	return p, nil
}

// ReadCast reads an asciicast v2 recording strictly: the header must say
// version 2 with a positive size, and every event must be a
// [time, code, data] triple with a known code and non-decreasing time.
func ReadCast(r io.Reader) (Header, []CastEvent, error) {
	cs, err := NewCastScanner(r)
	if err != nil {
		return Header{}, nil, err
	}
	var events []CastEvent
	for cs.Scan() {
		events = append(events, cs.Event())
	}
	return cs.Header(), events, cs.Err()
}

// CastScanner reads a recording's events one at a time, as strictly as
// ReadCast, so a recording of any length is read in constant memory.
type CastScanner struct {
	sc   *bufio.Scanner
	h    Header
	ev   CastEvent
	last float64
	line int
	err  error
}

// NewCastScanner reads and checks the recording's header.
func NewCastScanner(r io.Reader) (*CastScanner, error) {
	cs := &CastScanner{sc: bufio.NewScanner(r), line: 1}
	cs.sc.Buffer(make([]byte, 64<<10), 64<<20)
	if !cs.sc.Scan() {
		if err := cs.sc.Err(); err != nil {
			return nil, fmt.Errorf("read recording header: %w", err)
		}
		return nil, errors.New("read recording: the file is empty")
	}
	h := &cs.h
	if err := json.Unmarshal(cs.sc.Bytes(), h); err != nil {
		return nil, fmt.Errorf("read recording header: %w", err)
	}
	if h.Version != 2 {
		return nil, fmt.Errorf("read recording header: version %d, want 2", h.Version)
	}
	if h.Width <= 0 || h.Height <= 0 {
		return nil, fmt.Errorf("read recording header: size %dx%d is not positive", h.Width, h.Height)
	}
	return cs, nil
}

// Header is the recording's header.
func (cs *CastScanner) Header() Header { return cs.h }

// Scan reads the next event; it returns false at the end of the recording
// or at the first damaged line (Err says which).
func (cs *CastScanner) Scan() bool {
	if cs.err != nil {
		return false
	}
	for cs.sc.Scan() {
		cs.line++
		if len(bytes.TrimSpace(cs.sc.Bytes())) == 0 {
			continue
		}
		ev, err := parseEvent(cs.sc.Bytes())
		if err != nil {
			cs.err = fmt.Errorf("read recording line %d: %w", cs.line, err)
			return false
		}
		if ev.Time < cs.last {
			cs.err = fmt.Errorf("read recording line %d: time %.6f goes back from %.6f", cs.line, ev.Time, cs.last)
			return false
		}
		cs.last, cs.ev = ev.Time, ev
		return true
	}
	if err := cs.sc.Err(); err != nil {
		cs.err = fmt.Errorf("read recording: %w", err)
	}
	return false
}

// Event is the event Scan read.
func (cs *CastScanner) Event() CastEvent { return cs.ev }

// Err is the error that ended the scan, nil at a clean end.
func (cs *CastScanner) Err() error { return cs.err }

// parseEvent decodes one [time, code, data] line.
func parseEvent(b []byte) (CastEvent, error) {
	var ev CastEvent
	var raw []json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return ev, fmt.Errorf("event is not a JSON array: %w", err)
	}
	if len(raw) != 3 {
		return ev, fmt.Errorf("event has %d elements, want 3", len(raw))
	}
	if err := json.Unmarshal(raw[0], &ev.Time); err != nil || ev.Time < 0 {
		return ev, fmt.Errorf("event time %s is not a non-negative number", raw[0])
	}
	if err := json.Unmarshal(raw[1], &ev.Code); err != nil {
		return ev, fmt.Errorf("event code %s is not a string", raw[1])
	}
	if err := json.Unmarshal(raw[2], &ev.Data); err != nil {
		return ev, fmt.Errorf("event data %s is not a string", raw[2])
	}
	switch ev.Code {
	case "o", "i", "m":
	case "r":
		if _, _, err := parseSize(ev.Data); err != nil {
			return ev, err
		}
	default:
		return ev, fmt.Errorf("unknown event code %q", ev.Code)
	}
	return ev, nil
}

// parseSize parses "COLSxROWS".
func parseSize(s string) (cols, rows int, err error) {
	if _, err := fmt.Sscanf(s, "%dx%d", &cols, &rows); err != nil || cols <= 0 || rows <= 0 {
		return 0, 0, fmt.Errorf("resize %q is not COLSxROWS", s)
	}
	return cols, rows, nil
}

// Replay feeds the output and resize events of a recording into a fresh
// cols x rows emulator and returns its final screen.
func Replay(events []CastEvent, cols, rows int) View {
	t := newTerminal(cols, rows, 0, nil)
	for _, ev := range events {
		ReplayEvent(t, ev)
	}
	_ = t.Close()
	return t
}

// ReplayCast reads a recording and returns its final screen, replaying it
// as it reads. A recording whose tail is damaged (its writer was killed
// mid-line) still gives the screen up to the damage, with the error; only
// a recording with no readable header gives no screen.
func ReplayCast(r io.Reader) (View, error) {
	cs, err := NewCastScanner(r)
	if err != nil {
		return nil, err
	}
	h := cs.Header()
	t := newTerminal(h.Width, h.Height, 0, nil)
	for cs.Scan() {
		ReplayEvent(t, cs.Event())
	}
	_ = t.Close()
	return t, cs.Err()
}

// ReplayEvent applies one recorded event to t: output is written, a resize
// resizes, input and markers change nothing on screen.
func ReplayEvent(t *Terminal, ev CastEvent) {
	switch ev.Code {
	case "o":
		_, _ = t.Write([]byte(ev.Data))
	case "r":
		if c, r, err := parseSize(ev.Data); err == nil {
			t.Resize(c, r)
		}
	}
}

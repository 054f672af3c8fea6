package wire

import (
	"strconv"

	json "github.com/goccy/go-json"
)

// The screen's rows are most of what a session host and an engine send:
// tens of rows of styled text a frame, each escape sequence a \u001b in
// JSON. The pane frames (the host's pushed rows, the engine's pane
// pushes) are written and read with github.com/goccy/go-json rather than
// encoding/json: the same JSON to the byte (names, omissions, escapes,
// invalid UTF-8 as U+FFFD), so a peer of any version reads it unchanged
// and this one reads what any peer writes, with a codec compiled once a
// type instead of reflection over every value (measured: a 120x40 screen
// written and read back in under a third of encoding/json's time).

// AppendBody appends v written as JSON to b.
func AppendBody(b []byte, v any) ([]byte, error) {
	j, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return append(b, j...), nil
}

// ReadBody reads the JSON in b into v, as encoding/json's Unmarshal does.
func ReadBody(b []byte, v any) error {
	return json.Unmarshal(b, v)
}

// PushBody sends, as one message with no id, op with v as its body,
// written into buf (the push before's, reused) in one write, and returns
// the buffer for the next push. The message is the one Push writes.
func (c *Conn) PushBody(op string, v any, buf []byte) ([]byte, error) {
	b := append(buf[:0], `{"op":`...)
	b = strconv.AppendQuote(b, op) // ops are plain ASCII names
	b = append(b, `,"body":`...)
	b, err := AppendBody(b, v)
	if err != nil {
		return buf, err
	}
	b = append(b, '}', '\n')
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err = c.w.Write(b)
	return b, err
}

// Package headless is the console's text view: one line per ledger event,
// for CI logs, scripts and recordings. By default a line carries the real
// ids and the event's UTC time, so a script can pass an id to `correct` or
// match it with `status`; the stable form renames ids, process ids, clock
// times and digests so two runs of the same scenario print the same text
// (golden tests, the demo); the JSON form is one object per event.
package headless

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Format is how a Printer writes events.
type Format int

// The formats.
const (
	// Real lines start with the event's UTC time and carry the real ids.
	Real Format = iota
	// Stable lines rename ids, pids, clock times, durations and digests to
	// placeholders (T1, S1, pid N, hh:mm:ss, sha1), for golden tests.
	Stable
	// JSON writes one JSON object per line (see Record).
	JSON
)

// Record is one line of JSON output. Type is "event" for a ledger event
// and "verdict" for the closing line of each task.
type Record struct {
	Type    string          `json:"type"`
	Seq     int64           `json:"seq,omitempty"`
	ID      string          `json:"id,omitempty"` // the event's own id (a ULID), as in the ledger
	At      *time.Time      `json:"at,omitempty"`
	Task    task.ID         `json:"task"`
	Session string          `json:"session,omitempty"`
	Kind    task.Kind       `json:"kind,omitempty"`
	Reason  task.Reason     `json:"reason,omitempty"`
	Text    string          `json:"text,omitempty"`
	Data    json.RawMessage `json:"data,omitempty"`
	// The verdict line's fields.
	State   task.State `json:"state,omitempty"`
	Phase   task.Phase `json:"phase,omitempty"`
	Verdict string     `json:"verdict,omitempty"`
	Green   *bool      `json:"green,omitempty"`
}

// Printer writes events as lines.
type Printer struct {
	w        io.Writer
	format   Format
	tasks    map[string]string
	sessions map[string]string
	shas     map[string]string
}

// New returns a printer writing to w in format f.
func New(w io.Writer, f Format) *Printer {
	return &Printer{w: w, format: f, tasks: map[string]string{}, sessions: map[string]string{}, shas: map[string]string{}}
}

// volatile holds the patterns of what differs from run to run in an event
// line, compiled on the first line normalized: the binary's every process
// (a session host too) would pay for them at init.
var volatile = sync.OnceValue(func() volatilePatterns {
	return volatilePatterns{
		clock: regexp.MustCompile(`\b\d{2}:\d{2}:\d{2}(\.\d+)?\b`),
		dur:   regexp.MustCompile(`\b\d+(\.\d+)?(ms|µs|s|m)\b`),
		pid:   regexp.MustCompile(`pid \d+`),
		hex:   regexp.MustCompile(`\b[0-9a-f]{7,64}\b`),
		// renewals matches the renewal count an expiry reports, which
		// depends on how fast the machine ran the session.
		renewals: regexp.MustCompile(`\b\d+ renewal\(s\)`),
	}
})

type volatilePatterns struct{ clock, dur, pid, hex, renewals *regexp.Regexp }

// Line renders one event without writing it.
func (p *Printer) Line(ev task.Event) string {
	if p.format == JSON {
		at := ev.At.UTC()
		return p.record(Record{Type: "event", Seq: ev.Seq, ID: ev.ID, At: &at, Task: ev.TaskID, Session: ev.SessionID,
			Kind: ev.Kind, Reason: ev.Reason, Text: ev.Text, Data: validJSON(ev.Data)})
	}
	tname := string(ev.TaskID)
	// Made printable before renaming, so no placeholder can complete an
	// escape sequence the text began.
	text := oneLine(ev.Text)
	if p.format == Stable {
		tname = p.name(p.tasks, string(ev.TaskID), "T")
		if ev.SessionID != "" {
			p.name(p.sessions, ev.SessionID, "S")
		}
		text = p.Rename(text)
	}
	kind := string(ev.Kind)
	if ev.Reason != "" && ev.Kind == task.EvRefusal {
		kind = "refusal:" + string(ev.Reason)
	}
	line := fmt.Sprintf("%-4s %-32s %s", tname, kind, text)
	if p.format == Real {
		line = ev.At.UTC().Format("2006-01-02T15:04:05.000Z") + " " + line
	}
	return line
}

// record renders one JSON line.
func (p *Printer) record(r Record) string {
	b, err := json.Marshal(r)
	if err != nil {
		// Only Data could fail, and validJSON already dropped a bad one.
		return fmt.Sprintf(`{"type":"error","text":%q}`, err.Error())
	}
	return string(b)
}

// validJSON returns raw when it is valid JSON, else nil, so one event with
// bad data cannot break a reader's parse of the whole stream.
func validJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || !json.Valid(raw) {
		return nil
	}
	return raw
}

// Rename replaces, in text, the task and session ids this printer has seen
// by their stable names, and process ids, clock times, durations and hex
// digests (and an expiry's renewal count) by placeholders, as every
// line is in the stable form; in the others it
// returns text unchanged. Callers that print more than events (the demo's report)
// use it so their lines are as stable as the events'.
func (p *Printer) Rename(text string) string {
	if p.format != Stable {
		return text
	}
	for id, name := range p.tasks {
		text = strings.ReplaceAll(text, string(id), name)
		text = strings.ReplaceAll(text, strings.ToLower(string(id)), strings.ToLower(name))
		text = strings.ReplaceAll(text, task.ID(id).Short(), name)
		text = strings.ReplaceAll(text, strings.ToLower(task.ID(id).Short()), strings.ToLower(name))
	}
	for id, name := range p.sessions {
		text = strings.ReplaceAll(text, id, name)
		if len(id) > 8 {
			text = strings.ReplaceAll(text, id[len(id)-8:], name)
		}
	}
	re := volatile()
	text = re.pid.ReplaceAllString(text, "pid N")
	text = re.renewals.ReplaceAllString(text, "N renewal(s)")
	text = re.clock.ReplaceAllString(text, "hh:mm:ss")
	text = re.dur.ReplaceAllString(text, "Ns")
	return re.hex.ReplaceAllStringFunc(text, func(s string) string {
		return p.name(p.shas, s, "sha")
	})
}

// Print writes one event's line.
func (p *Printer) Print(ev task.Event) {
	fmt.Fprintln(p.w, p.Line(ev))
}

func (p *Printer) name(m map[string]string, id, prefix string) string {
	if id == "" {
		return "-"
	}
	if n, ok := m[id]; ok {
		return n
	}
	n := fmt.Sprintf("%s%d", prefix, len(m)+1)
	m[id] = n
	return n
}

func oneLine(s string) string { return Printable(s) }

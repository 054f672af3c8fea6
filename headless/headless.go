// Package headless is the console's text view: one stable line per ledger
// event, for CI logs, scripts and recordings. Ids, process ids and clock
// times are replaced by stable names unless timestamps are asked for, so two
// runs of the same scenario print the same text.
package headless

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Printer writes events as lines.
type Printer struct {
	w          io.Writer
	timestamps bool
	tasks      map[string]string
	sessions   map[string]string
	shas       map[string]string
}

// New returns a printer writing to w. With timestamps, each line starts with
// the event's UTC time and nothing is renamed.
func New(w io.Writer, timestamps bool) *Printer {
	return &Printer{w: w, timestamps: timestamps, tasks: map[string]string{}, sessions: map[string]string{}, shas: map[string]string{}}
}

var (
	clockRE = regexp.MustCompile(`\b\d{2}:\d{2}:\d{2}(\.\d+)?\b`)
	durRE   = regexp.MustCompile(`\b\d+(\.\d+)?(ms|µs|s|m)\b`)
	pidRE   = regexp.MustCompile(`pid \d+`)
	hexRE   = regexp.MustCompile(`\b[0-9a-f]{7,64}\b`)
	// renewalsRE matches the renewal count an expiry reports, which
	// depends on how fast the machine ran the session.
	renewalsRE = regexp.MustCompile(`\b\d+ renewal\(s\)`)
)

// Line renders one event without writing it.
func (p *Printer) Line(ev task.Event) string {
	tname := string(ev.TaskID)
	// Made printable before renaming, so no placeholder can complete an
	// escape sequence the text began.
	text := oneLine(ev.Text)
	if !p.timestamps {
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
	if p.timestamps {
		line = ev.At.UTC().Format("2006-01-02T15:04:05.000Z") + " " + line
	}
	return line
}

// Rename replaces, in text, the task and session ids this printer has seen
// by their stable names, and process ids, clock times, durations and hex
// digests (and an expiry's renewal count) by placeholders, as every
// line is; with timestamps it returns
// text unchanged. Callers that print more than events (the demo's report)
// use it so their lines are as stable as the events'.
func (p *Printer) Rename(text string) string {
	if p.timestamps {
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
	text = pidRE.ReplaceAllString(text, "pid N")
	text = renewalsRE.ReplaceAllString(text, "N renewal(s)")
	text = clockRE.ReplaceAllString(text, "hh:mm:ss")
	text = durRE.ReplaceAllString(text, "Ns")
	return hexRE.ReplaceAllStringFunc(text, func(s string) string {
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

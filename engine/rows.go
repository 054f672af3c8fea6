package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// wireSnap is a snapshot as an engine pushes it to a console. A store of
// ten thousand ended tasks made a snapshot of 7 MB of JSON objects whose
// decoding was most of an attach; the tasks with nothing live behind them
// (coord.TaskView.Summary) travel instead as Rows, one string of fields
// separated by | each (appendRow): a third of the bytes, and strings
// that encoding/json copies rather than objects it matches field by
// field. Snap.Tasks holds the other, live, views whole,
// at the positions Live gives in the snapshot's order.
type wireSnap struct {
	Snap coord.Snapshot
	Live []int    `json:",omitempty"`
	Rows []string `json:",omitempty"`
}

// toWire splits a snapshot into its wire form.
func toWire(s coord.Snapshot) wireSnap {
	w := wireSnap{Snap: s}
	var live []coord.TaskView
	var b []byte
	w.Rows = make([]string, 0, len(s.Tasks))
	for i, tv := range s.Tasks {
		if sum := tv.Summary(); sum.SessionID == "" && sum.Lease == nil && !sum.Gate {
			b = appendRow(b[:0], sum)
			w.Rows = append(w.Rows, string(b))
			continue
		}
		live = append(live, tv)
		w.Live = append(w.Live, i)
	}
	w.Snap.Tasks = live
	return w
}

// fromWire joins the live views and the rows back into one snapshot.
func fromWire(w wireSnap) (coord.Snapshot, error) {
	s := w.Snap
	n := len(s.Tasks) + len(w.Rows)
	tasks := make([]coord.TaskView, 0, n)
	rows, live := w.Rows, s.Tasks
	for i := range n {
		if len(w.Live) > 0 && w.Live[0] == i {
			if len(live) == 0 {
				return s, errors.New("engine protocol: a snapshot names more live tasks than it holds")
			}
			tasks = append(tasks, live[0])
			live, w.Live = live[1:], w.Live[1:]
			continue
		}
		tv, err := parseRow(rows[0])
		rows = rows[1:]
		if err != nil {
			return s, fmt.Errorf("engine protocol: task %d of the snapshot: %w", i+1, err)
		}
		tasks = append(tasks, tv)
	}
	if len(live) > 0 || len(w.Live) > 0 {
		return s, errors.New("engine protocol: a snapshot's live tasks do not match their positions")
	}
	s.Tasks = tasks
	return s, nil
}

// rowFields is the number of fields of a summary row.
const rowFields = 41

// appendRow appends a summary as one row: the fields in the order
// parseRow reads them, each escaped (escape), lists joined by commas
// (a list of one empty string reads back empty: no model or list of
// models is ever that), times as RFC 3339 with nanoseconds as
// encoding/json would carry them (empty when zero).
func appendRow(b []byte, tv coord.TaskView) []byte {
	t := tv.Task
	field := func(s string) {
		b = escape(b, s)
		b = append(b, '|')
	}
	num := func(n int64) {
		b = strconv.AppendInt(b, n, 10)
		b = append(b, '|')
	}
	when := func(t time.Time) {
		if !t.IsZero() {
			b = t.AppendFormat(b, time.RFC3339Nano)
		}
		b = append(b, '|')
	}
	list := func(l []string) {
		for i, s := range l {
			if i > 0 {
				b = append(b, ',')
			}
			b = escape(b, s)
		}
		b = append(b, '|')
	}
	field(string(t.ID))
	field(t.Title)
	field(t.Harness)
	field(t.Model)
	field(string(t.State))
	field(string(t.Phase))
	num(int64(t.Attempt))
	field(t.BaseCommit)
	field(t.Branch)
	field(t.Reason)
	when(t.CreatedAt)
	when(t.UpdatedAt)
	field(tv.Flag)
	b = strconv.AppendBool(b, tv.Stuck)
	b = append(b, '|')
	list(tv.Models)
	field(tv.Host)
	num(tv.Disk.Worktree)
	num(tv.Disk.Recordings)
	when(tv.Disk.At)
	u := tv.Usage
	num(u.InputTokens)
	num(u.OutputTokens)
	num(u.CacheCreationTokens)
	num(u.CacheReadTokens)
	b = strconv.AppendFloat(b, u.CostUSD, 'g', -1, 64)
	b = append(b, '|')
	list(u.Models)
	if v := tv.Verdict; v != nil {
		field("v")
		field(string(v.Status))
		field(v.Command)
		num(int64(v.ExitCode))
		num(int64(v.Passed))
		num(int64(v.Failed))
		num(int64(v.Skipped))
		b = strconv.AppendBool(b, v.Counted)
		b = append(b, '|')
		num(v.OutputBytes)
		field(v.Detail)
		num(int64(v.Duration))
		when(v.At)
	} else {
		b = append(b, "||||||||||||"...) // no verdict: its 12 fields empty
	}
	if tv.PR != nil {
		// The pull request is rare and small: carried as its JSON.
		js, _ := json.Marshal(tv.PR)
		field(string(js))
	} else {
		b = append(b, '|')
	}
	field(u.LowerBound)
	field(tv.Working)
	when(tv.LimitReset)
	return b
}

// parseRow reads a row appendRow wrote.
func parseRow(line string) (coord.TaskView, error) {
	var (
		tv     coord.TaskView
		f      [rowFields]string
		n, err = 0, error(nil)
	)
	for n < rowFields {
		i := strings.IndexByte(line, '|')
		if i < 0 {
			return tv, fmt.Errorf("a task row has %d fields, not %d", n, rowFields)
		}
		f[n], line = line[:i], line[i+1:]
		n++
	}
	if line != "" {
		return tv, fmt.Errorf("a task row has more than %d fields", rowFields)
	}
	str := func(i int) string {
		if strings.IndexByte(f[i], '\\') < 0 {
			return f[i]
		}
		return unescape(f[i])
	}
	num := func(i int) int64 {
		v, e := strconv.ParseInt(f[i], 10, 64)
		if e != nil && err == nil {
			err = fmt.Errorf("field %d: %w", i+1, e)
		}
		return v
	}
	when := func(i int) time.Time {
		if f[i] == "" {
			return time.Time{}
		}
		t, e := time.Parse(time.RFC3339Nano, f[i])
		if e != nil && err == nil {
			err = fmt.Errorf("field %d: %w", i+1, e)
		}
		return t
	}
	list := func(i int) []string {
		if f[i] == "" {
			return nil
		}
		l := strings.Split(f[i], ",")
		for j, s := range l {
			if strings.IndexByte(s, '\\') >= 0 {
				l[j] = unescape(s)
			}
		}
		return l
	}
	tv.Task = task.Task{ID: task.ID(str(0)), Title: str(1), Harness: str(2), Model: str(3),
		State: task.State(str(4)), Phase: task.Phase(str(5)), Attempt: int(num(6)), BaseCommit: str(7),
		Branch: str(8), Reason: str(9), CreatedAt: when(10), UpdatedAt: when(11)}
	tv.Flag = str(12)
	tv.Stuck = f[13] == "true"
	tv.Models = list(14)
	tv.Host = str(15)
	tv.Disk = coord.DiskUse{Worktree: num(16), Recordings: num(17), At: when(18)}
	tv.Usage = coord.Usage{InputTokens: num(19), OutputTokens: num(20), CacheCreationTokens: num(21),
		CacheReadTokens: num(22), Models: list(24)}
	cost, e := strconv.ParseFloat(f[23], 64)
	if e != nil {
		return tv, fmt.Errorf("field 24: %w", e)
	}
	tv.Usage.CostUSD = cost
	if f[25] == "v" {
		tv.Verdict = &verify.Verdict{Status: verify.Status(str(26)), Command: str(27), ExitCode: int(num(28)),
			Passed: int(num(29)), Failed: int(num(30)), Skipped: int(num(31)), Counted: f[32] == "true",
			OutputBytes: num(33), Detail: str(34), Duration: time.Duration(num(35)), At: when(36)}
	}
	if f[37] != "" {
		var pr task.PullData
		if e := json.Unmarshal([]byte(str(37)), &pr); e != nil && err == nil {
			err = fmt.Errorf("field 38: %w", e)
		}
		tv.PR = &pr
	}
	tv.Usage.LowerBound = str(38)
	tv.Working = str(39)
	tv.LimitReset = when(40)
	return tv, err
}

// escape appends s with a backslash before a backslash, and a bar and a
// comma written as \b and \c, so neither ends a field or a list item.
func escape(b []byte, s string) []byte {
	for {
		i := strings.IndexAny(s, `\|,`)
		if i < 0 {
			return append(b, s...)
		}
		b = append(b, s[:i]...)
		switch s[i] {
		case '\\':
			b = append(b, `\\`...)
		case '|':
			b = append(b, `\b`...)
		case ',':
			b = append(b, `\c`...)
		}
		s = s[i+1:]
	}
}

// unescape reverses escape.
func unescape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'b':
				c = '|'
			case 'c':
				c = ','
			default:
				c = s[i]
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

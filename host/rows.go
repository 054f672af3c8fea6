package host

import (
	"sync"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/vt"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

// opRows -> rowsReply: the screen as rows at the pty's width, written by
// the emulator (session.RowWriter), and only the rows that changed since
// the reply the client says it holds (rowsReq.Have). The plain text
// comes only when asked (the engine's stuck fingerprint, dialog and limit
// checks read it once a sample, not once a frame). A host older than it
// answers "unknown request", which the client takes as a host that only
// serves opScreen (the whole rendered screen and its text): nothing is
// misread, so the protocol's version stays.
const opRows = "rows"

type rowsReq struct {
	// Have is the Seq of the last reply (or pushed rows) the client
	// applied; 0 asks for every row.
	Have uint64 `json:"have,omitempty"`
	// Text asks for the screen's plain text too.
	Text bool `json:"text,omitempty"`
}

// rowAt is one changed row.
type rowAt struct {
	Y    int    `json:"y"`
	Line string `json:"l"`
}

// rowsReply is a screen as rows. Seq names the reply on its connection:
// the next request's Have. It is not the screen's version, which a read
// racing a write can leave behind the rows it labels; a sequence number
// of replies says exactly which rows the client holds.
type rowsReply struct {
	Seq     uint64   `json:"seq"`
	Version uint64   `json:"version"`
	Cols    int      `json:"cols"`
	Rows    int      `json:"rows"`
	X       int      `json:"x,omitempty"`
	Y       int      `json:"y,omitempty"`
	Cursor  bool     `json:"cursor,omitempty"`
	Title   string   `json:"title,omitempty"`
	Modes   vt.Modes `json:"modes"`
	// Base is the Seq the changes in Set apply to; 0 when Lines holds
	// every row instead.
	Base uint64 `json:"base,omitempty"`
	// Shift moves the rows of Base up before Set applies
	// (session.RowsDelta): sent only in pushed rows, whose clients all
	// know it.
	Shift int      `json:"shift,omitempty"`
	Lines []string `json:"lines,omitempty"`
	Set   []rowAt  `json:"set,omitempty"`
	// Text is set when it was asked for (HasText), even when empty.
	Text    string `json:"text,omitempty"`
	HasText bool   `json:"has_text,omitempty"`
}

// watchReq is opWatch's body. Rows asks for the changed rows with each
// change notice (pushed rows): the notice's body is then a rowsReply,
// whose changes apply over the rows of the notice before, and the client
// never asks for rows. A host that offers it says so in its welcome
// (Welcome.PushRows); an older host ignores the body and sends bare
// notices, and a client of this version asks (opRows, else opScreen).
// An older client sends no body and gets bare notices.
type watchReq struct {
	Rows bool `json:"rows,omitempty"`
}

// rowSender is one connection's side of opRows: the rows it last sent,
// which the next request's (or push's) changes are taken against.
type rowSender struct {
	mu    sync.Mutex
	seq   uint64
	lines []string
	cache session.RowCache
	buf   []byte // the last push's message, reused
}

// reply reads v's screen and answers q. The version is read first: if the
// screen changes while it is read, the next notice carries a higher
// version and the client asks again.
func (rs *rowSender) reply(v session.View, q rowsReq) rowsReply {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.replyLocked(v, q, false)
}

// push sends on c, as one change notice, the rows of v that changed since
// the rows last pushed (every row the first time, when whole, or when the
// size changed), with the plain text when text. It returns the version
// the notice carries. The rows are taken and written under rs.mu, so
// notices reach the client in the order their changes were taken, and
// each applies over the one before. A client slower than the screen
// blocks the write; the changes meanwhile wait in the screen itself, and
// the next push carries the rows that differ from the last one written:
// the newest state of each row, never a queue of them.
func (rs *rowSender) push(c *wire.Conn, v session.View, text, whole bool) (uint64, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	q := rowsReq{Have: rs.seq, Text: text}
	if whole {
		q.Have = 0
	}
	r := rs.replyLocked(v, q, true)
	var err error
	rs.buf, err = c.PushBody(opChanged, &r, rs.buf)
	return r.Version, err
}

// replyLocked answers q, with a shift when shift (pushed rows).
func (rs *rowSender) replyLocked(v session.View, q rowsReq, shift bool) rowsReply {
	ver := v.Version()
	cols, rows := v.Size()
	x, y, vis := v.Cursor()
	r := rowsReply{Version: ver, Cols: cols, Rows: rows, X: x, Y: y, Cursor: vis, Title: v.Title()}
	if m, ok := v.(session.ModeReporter); ok {
		r.Modes = m.Modes()
	}
	// A new slice each time: the rows last sent may still be on their
	// way out in the reply before.
	// Only the rows whose cells changed since the last read are
	// written again (session.RowCache).
	lines := rs.cache.Rows(v, make([]string, 0, rows), cols, rows)
	if q.Text {
		r.Text, r.HasText = v.Text(), true
	}
	if q.Have != 0 && q.Have == rs.seq && len(rs.lines) == len(lines) {
		r.Base = rs.seq
		if shift {
			var changed []int
			r.Shift, changed = session.RowsDelta(rs.lines, lines)
			for _, i := range changed {
				r.Set = append(r.Set, rowAt{Y: i, Line: lines[i]})
			}
		} else {
			for i, l := range lines {
				if l != rs.lines[i] {
					r.Set = append(r.Set, rowAt{Y: i, Line: l})
				}
			}
		}
	} else {
		r.Lines = lines
	}
	rs.seq++
	r.Seq, rs.lines = rs.seq, lines
	return r
}

// splitRows cuts a rendered screen into rows rows of exactly cols columns.
func splitRows(render string, cols, rows int) []string {
	out := make([]string, rows)
	start := 0
	for i := range out {
		l := ""
		if start <= len(render) {
			end := start
			for end < len(render) && render[end] != '\n' {
				end++
			}
			l = render[start:end]
			start = end + 1
		}
		out[i] = session.FitRow(l, cols)
	}
	return out
}

// apply takes a reply into the rows held, which must be those of the reply
// named r.Base; false when they are not (the client asks for every row).
func applyRows(held []string, r rowsReply) ([]string, bool) {
	if r.Base == 0 {
		return r.Lines, true
	}
	if len(held) != r.Rows {
		return held, false
	}
	if len(r.Set) == 0 && r.Shift == 0 {
		return held, true
	}
	out := make([]string, len(held))
	copy(out, held)
	session.ShiftRows(out, r.Shift)
	for _, s := range r.Set {
		if s.Y < 0 || s.Y >= len(out) {
			return held, false
		}
		out[s.Y] = s.Line
	}
	return out, true
}

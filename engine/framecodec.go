package engine

import (
	"encoding/json"
	"strconv"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

// pushPane sends a pane frame, written as encoding/json would write it
// (the same names and omissions) in one pass: its rows are most of what
// an engine sends a console.
func pushPane(c *wire.Conn, f *paneFrame, buf []byte) ([]byte, error) {
	b := appendPaneFrame(buf[:0], f)
	return b, c.PushRaw(opPane, 0, b)
}

func appendPaneFrame(b []byte, f *paneFrame) []byte {
	b = append(b, '{')
	b = wire.AppendString(wire.AppendKey(b, "task"), string(f.Task))
	b = wire.AppendText(b, "session", f.Session)
	b = wire.AppendTrue(b, "gone", f.Gone)
	b = wire.AppendInt(b, "cols", f.Cols)
	b = wire.AppendInt(b, "rows", f.Rows)
	if len(f.Lines) > 0 {
		b = append(wire.AppendKey(b, "lines"), '[')
		for i, l := range f.Lines {
			if i > 0 {
				b = append(b, ',')
			}
			b = wire.AppendString(b, l)
		}
		b = append(b, ']')
	}
	b = wire.AppendTrue(b, "delta", f.Delta)
	b = wire.AppendInt(b, "shift", f.Shift)
	if len(f.Set) > 0 {
		b = append(wire.AppendKey(b, "set"), '[')
		for i, s := range f.Set {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"y":`...)
			b = strconv.AppendInt(b, int64(s.Y), 10)
			b = append(b, `,"l":`...)
			b = wire.AppendString(b, s.Line)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = wire.AppendText(b, "text", f.Text)
	b = wire.AppendInt(b, "x", f.X)
	b = wire.AppendInt(b, "y", f.Y)
	b = wire.AppendTrue(b, "cursor", f.Cursor)
	b = wire.AppendText(b, "title", f.Title)
	b = wire.AppendUint(b, "version", f.Version)
	return append(b, '}')
}

// readPane reads a pane frame in one pass (wire.Dec), or with
// encoding/json what that does not expect (an engine of another version
// may write it otherwise).
func readPane(b []byte) (paneFrame, error) {
	var f paneFrame
	d := wire.NewDec(b)
	d.Object(func(k []byte) {
		switch string(k) {
		case "task":
			f.Task = task.ID(d.String())
		case "session":
			f.Session = d.String()
		case "gone":
			f.Gone = d.Bool()
		case "cols":
			f.Cols = d.Int()
		case "rows":
			f.Rows = d.Int()
		case "lines":
			d.Array(func() { f.Lines = append(f.Lines, d.String()) })
		case "delta":
			f.Delta = d.Bool()
		case "shift":
			f.Shift = d.Int()
		case "set":
			d.Array(func() {
				var s paneRow
				d.Object(func(k []byte) {
					switch string(k) {
					case "y":
						s.Y = d.Int()
					case "l":
						s.Line = d.String()
					default:
						d.Skip()
					}
				})
				f.Set = append(f.Set, s)
			})
		case "text":
			f.Text = d.String()
		case "x":
			f.X = d.Int()
		case "y":
			f.Y = d.Int()
		case "cursor":
			f.Cursor = d.Bool()
		case "title":
			f.Title = d.String()
		case "version":
			f.Version = d.Uint()
		default:
			d.Skip()
		}
	})
	if !d.Bad() {
		return f, nil
	}
	f = paneFrame{}
	err := json.Unmarshal(b, &f)
	return f, err
}

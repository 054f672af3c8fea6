package host

import (
	"encoding/json"
	"strconv"

	"github.com/orchestra-tui/orchestra-tui/wire"
)

// appendRowsReply writes r as encoding/json would (the same names and
// omissions), in one pass (wire.AppendString).
func appendRowsReply(b []byte, r *rowsReply) ([]byte, error) {
	b = append(b, '{')
	b = wire.AppendKey(b, "seq")
	b = appendUint(b, r.Seq)
	b = wire.AppendKey(b, "version")
	b = appendUint(b, r.Version)
	b = wire.AppendKey(b, "cols")
	b = appendInt(b, r.Cols)
	b = wire.AppendKey(b, "rows")
	b = appendInt(b, r.Rows)
	b = wire.AppendInt(b, "x", r.X)
	b = wire.AppendInt(b, "y", r.Y)
	b = wire.AppendTrue(b, "cursor", r.Cursor)
	b = wire.AppendText(b, "title", r.Title)
	m, err := json.Marshal(r.Modes)
	if err != nil {
		return nil, err
	}
	b = append(wire.AppendKey(b, "modes"), m...)
	b = wire.AppendUint(b, "base", r.Base)
	b = wire.AppendInt(b, "shift", r.Shift)
	if len(r.Lines) > 0 {
		b = append(wire.AppendKey(b, "lines"), '[')
		for i, l := range r.Lines {
			if i > 0 {
				b = append(b, ',')
			}
			b = wire.AppendString(b, l)
		}
		b = append(b, ']')
	}
	if len(r.Set) > 0 {
		b = append(wire.AppendKey(b, "set"), '[')
		for i, s := range r.Set {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"y":`...)
			b = appendInt(b, s.Y)
			b = append(b, `,"l":`...)
			b = wire.AppendString(b, s.Line)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = wire.AppendText(b, "text", r.Text)
	b = wire.AppendTrue(b, "has_text", r.HasText)
	return append(b, '}'), nil
}

func appendUint(b []byte, n uint64) []byte { return strconv.AppendUint(b, n, 10) }
func appendInt(b []byte, n int) []byte     { return strconv.AppendInt(b, int64(n), 10) }

// readRowsReply reads a rowsReply in one pass (wire.Dec), or with
// encoding/json what that does not expect.
func readRowsReply(b []byte) (rowsReply, error) {
	var r rowsReply
	d := wire.NewDec(b)
	d.Object(func(k []byte) {
		switch string(k) {
		case "seq":
			r.Seq = d.Uint()
		case "version":
			r.Version = d.Uint()
		case "cols":
			r.Cols = d.Int()
		case "rows":
			r.Rows = d.Int()
		case "x":
			r.X = d.Int()
		case "y":
			r.Y = d.Int()
		case "cursor":
			r.Cursor = d.Bool()
		case "title":
			r.Title = d.String()
		case "modes":
			if raw := d.Raw(); raw != nil && json.Unmarshal(raw, &r.Modes) != nil {
				d.Fail()
			}
		case "base":
			r.Base = d.Uint()
		case "shift":
			r.Shift = d.Int()
		case "lines":
			d.Array(func() { r.Lines = append(r.Lines, d.String()) })
		case "set":
			d.Array(func() {
				var s rowAt
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
				r.Set = append(r.Set, s)
			})
		case "text":
			r.Text = d.String()
		case "has_text":
			r.HasText = d.Bool()
		default:
			d.Skip()
		}
	})
	if !d.Bad() {
		return r, nil
	}
	r = rowsReply{}
	err := json.Unmarshal(b, &r)
	return r, err
}

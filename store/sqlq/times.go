package sqlq

import (
	"fmt"
	"time"
)

// timeLayout is fixed-width, nanosecond, always UTC, so SQLite's stored
// times compare correctly as text.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// TimeText renders t for a SQLite time column.
func TimeText(t time.Time) string { return t.UTC().Format(timeLayout) }

// ParseTime reads a SQLite time column written by TimeText.
func ParseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}

// At is a scan destination for a time column of either dialect: SQLite's
// text ("" for none) or PostgreSQL's timestamptz (NULL for none), read into
// *t in UTC, the zero time for none.
func At(t *time.Time) atDest { return atDest{t} }

type atDest struct{ t *time.Time }

// Scan is database/sql's Scanner, which pgx honours as well.
func (d atDest) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*d.t = time.Time{}
	case time.Time:
		*d.t = x.UTC()
	case string:
		return d.text(x)
	case []byte:
		return d.text(string(x))
	default:
		return fmt.Errorf("stored time of type %T", v)
	}
	return nil
}

func (d atDest) text(s string) error {
	if s == "" {
		*d.t = time.Time{}
		return nil
	}
	t, err := ParseTime(s)
	*d.t = t
	return err
}

package vt

import "slices"

// RowCache keeps the rows a reader of a Terminal last wrote (AppendRow),
// each with a copy of the cells it was written from, keyed by the screen
// line: a reader that writes the whole screen once per change writes
// again only the rows whose cells changed. A status line that changes
// costs one row; a scroll too, since the lines that moved kept their
// cells. A style id names one style until the table is compacted, and a
// cluster id one cluster for ever, so equal cells write equal rows; a
// compaction forgets every row.
//
// A RowCache is one reader's, used under the Terminal's lock, and holds
// only the lines of the last call.
type RowCache struct {
	term        *Terminal
	w           int
	compactions uint64
	rows, spare map[*line]*cachedRow
}

type cachedRow struct {
	cells []Cell
	s     string
}

// AppendRows appends rows from..from+n-1 of t's screen, each exactly w
// columns wide as AppendRow writes them (rows outside the screen blank).
func (c *RowCache) AppendRows(t *Terminal, dst []string, from, n, w int) []string {
	if c.term != t || c.w != w || c.compactions != t.compactions || c.rows == nil {
		c.term, c.w, c.compactions = t, w, t.compactions
		c.rows, c.spare = map[*line]*cachedRow{}, map[*line]*cachedRow{}
	}
	next := c.spare
	clear(next)
	var buf []byte
	for y := from; y < from+n; y++ {
		if y < 0 || y >= t.rows {
			buf = t.appendCells(buf[:0], nil, w, true)
			dst = append(dst, string(buf))
			continue
		}
		l := t.scr.line(y)
		e := c.rows[l]
		if e == nil {
			e = &cachedRow{}
		} else if slices.Equal(e.cells, l.cells) {
			next[l] = e
			dst = append(dst, e.s)
			continue
		}
		buf = t.appendCells(buf[:0], l.cells, w, true)
		e.cells, e.s = append(e.cells[:0], l.cells...), string(buf)
		next[l] = e
		dst = append(dst, e.s)
	}
	c.rows, c.spare = next, c.rows
	return dst
}

package vt

// minStyleLimit is the style table size below which it is never compacted.
const minStyleLimit = 16384

// compactStyles rebuilds the style table from the styles still in use on
// the screens and in the history. A program that paints with ever new
// 24-bit colours (a spinner cycling through hues) would otherwise grow the
// table without end; the shared agent stream leaves 90,000 styles behind,
// of which a few hundred are still visible. It runs when the table has
// doubled since the last compaction, so its cost (re-encoding the history)
// is spread over that many new styles.
func (t *Terminal) compactStyles() {
	old := t.styles
	// The table and history of the last compaction are reused, so a
	// steady flood of new colours allocates nothing here either.
	nt := t.spareStyles
	if nt == nil {
		nt = newStyleTable()
	} else {
		nt.reset()
	}
	const none = ^uint32(0)
	m := t.styleMap[:0]
	for range old.list {
		m = append(m, none)
	}
	t.styleMap = m
	m[0] = 0
	get := func(id uint32) uint32 {
		if m[id] == none {
			m[id] = nt.add(old.list[id])
		}
		return m[id]
	}
	for _, s := range []*screen{t.main, t.alt} {
		if s == nil {
			continue
		}
		for _, l := range s.ring {
			for i := range l.cells {
				l.cells[i].Style = get(l.cells[i].Style)
			}
		}
	}
	// Re-encode the history with the new ids, oldest first.
	h2 := t.spareHist
	h2.clear()
	h2.limit = t.hist.limit
	scratch := &t.scratchLine
	for i := range t.hist.len() {
		e := t.hist.ent(i)
		scratch.cells = scratch.cells[:0]
		scratch.wrapped = e.wrapped
		scratch.used = int(e.used)
		t.hist.each(e, t.glyphs.clusters, func(c Cell, w int) {
			c.Style = get(c.Style)
			scratch.cells = append(scratch.cells, c)
			if w == 2 {
				scratch.cells = append(scratch.cells, Cell{Style: c.Style})
			}
		})
		h2.push(scratch, t.glyphs.clusters)
	}
	t.spareHist, t.hist = t.hist, h2
	t.cur.styleID = get(t.cur.styleID)
	t.spareStyles, t.styles = old, nt
	t.compactions++
	t.styleLimit = max(minStyleLimit, 2*len(nt.list))
}

package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/orchestra-tui/orchestra-tui/coord"
)

// markGlyphs are the timeline's glyph for each kind of mark, and
// markRank which one a cell shows when several fall on it.
var (
	markGlyphs = map[string]string{
		"brief": "»", "correction": "◆", "stuck": "⚑", "renewal refused": "✗",
		"sealed": "✓", "exited": "■", "marker": "•",
	}
	markRank = map[string]int{
		"correction": 6, "stuck": 5, "renewal refused": 4, "brief": 3, "sealed": 2, "exited": 1, "marker": 0,
	}
)

func markGlyph(label string) string {
	if g, ok := markGlyphs[label]; ok {
		return g
	}
	return "•"
}

// strips are the n rows the replay shows over its screen, where the
// live task's lease and verdict strips are: the timeline, the player's
// state, then (with room) the damage or the mark the playhead is at.
func (r *replay) strips(w, n int) []string {
	out := []string{r.timeline(w), r.statusLine(w, n < 3)}
	if n >= 3 {
		out = append(out, r.detailLine(w))
	}
	return block(out[:min(len(out), n)], w, n)
}

// markCol is the timeline column of a moment of the recording.
func (r *replay) markCol(at float64, w int) int {
	if r.end <= 0 || w <= 1 {
		return 0
	}
	return min(max(int(math.Round(at/r.end*float64(w-1))), 0), w-1)
}

// timeline is the recording's length across w cells: played, the
// playhead, the rest, and a glyph at each of the ledger's marks.
func (r *replay) timeline(w int) string {
	if w <= 0 {
		return ""
	}
	if r.term == nil {
		return r.st.sep.Render(strings.Repeat("─", w))
	}
	head := r.markCol(r.pos, w)
	cells := make([]string, w)
	for i := range cells {
		if i < head {
			cells[i] = r.st.key.Render("━")
		} else {
			cells[i] = r.st.sep.Render("─")
		}
	}
	rank := make([]int, w)
	for i := range rank {
		rank[i] = -1
	}
	for i, m := range r.rec.Marks {
		c := r.markCol(m.At, w)
		if markRank[m.Label] < rank[c] {
			continue
		}
		rank[c] = markRank[m.Label]
		style := r.st.warn
		if i == r.mark || c == head {
			style = r.st.focus
		}
		cells[c] = style.Render(markGlyph(m.Label))
	}
	if rank[head] < 0 {
		cells[head] = r.st.bold.Render("●")
	}
	if r.rec.Damaged != "" && head != w-1 {
		cells[w-1] = r.st.refusal.Render("╳")
	}
	return strings.Join(cells, "")
}

// statusLine says whether it plays, at what speed, where the playhead is
// in the recording, the mark it is on and which session it is; short
// adds the damage, which has no row of its own then.
func (r *replay) statusLine(w int, short bool) string {
	switch {
	case r.loading:
		return fit(r.st.dim.Render("REPLAY · reading the recording…"), w)
	case r.err != nil:
		return fit(r.st.statusErr.Render("REPLAY · the recording could not be read"), w)
	}
	state := "❚❚ paused"
	switch {
	case r.seeking != 0:
		state = "… seeking"
	case r.playing:
		state = "▶ playing"
	case r.next >= len(r.rec.Events) && r.pos >= r.end:
		state = "■ end"
	}
	parts := []string{
		r.st.bold.Render(state),
		strconv.FormatFloat(replaySpeeds[r.speed], 'f', -1, 64) + "x",
		replayClock(r.pos) + " / " + replayClock(r.end),
	}
	if r.mark >= 0 && r.mark < len(r.rec.Marks) {
		m := r.rec.Marks[r.mark]
		parts = append(parts, r.st.warn.Render(fmt.Sprintf("%s %s %d/%d", markGlyph(m.Label), m.Label, r.mark+1, len(r.rec.Marks))))
	} else {
		parts = append(parts, r.st.dim.Render(plural(len(r.rec.Marks), "mark", "marks")))
	}
	if short && r.rec.Damaged != "" {
		parts = append(parts, r.st.refusal.Render("╳ damaged"))
	}
	sep := r.st.sep.Render(" · ")
	line := strings.Join(parts, sep)
	// Which session plays comes last and gives way first: "session 2/3
	// implement #1", then "2/3 implement #1", then nothing.
	if i := r.sessionIndex(); i >= 0 {
		s := r.sessions[i]
		short := fmt.Sprintf("%d/%d %s #%d", i+1, len(r.sessions), s.Phase, s.Attempt)
		for _, name := range []string{"session " + short, short} {
			if l := line + sep + r.st.dim.Render(name); ansi.StringWidth(l) <= w {
				return fit(l, w)
			}
		}
	}
	return fit(line, w)
}

// detailLine is the damage when the recording is damaged, else the text
// of the mark the playhead is on (or the next one).
func (r *replay) detailLine(w int) string {
	if r.rec.Damaged != "" {
		return fit(r.st.refusal.Render("╳ damaged: "+ansiSafe(r.rec.Damaged)), w)
	}
	if r.term == nil {
		return fit("", w)
	}
	i, prefix := r.mark, ""
	if i < 0 {
		i, prefix = len(r.rec.Marks), "next: "
		for j, m := range r.rec.Marks {
			if m.At > r.pos {
				i = j
				break
			}
		}
	}
	if i >= len(r.rec.Marks) {
		return fit(r.st.dim.Render("no mark ahead · [ goes back to the previous one"), w)
	}
	return fit(r.st.dim.Render(prefix+markText(r.rec.Marks[i])), w)
}

// markText names a mark with its time and the event's text.
func markText(m coord.Mark) string {
	s := markGlyph(m.Label) + " " + m.Label + " at " + replayClock(m.At)
	if t := strings.Join(strings.Fields(ansiSafe(m.Text)), " "); t != "" {
		s += ": " + t
	}
	return s
}

// replayClock is a moment of a recording as m:ss.s, or h:mm:ss past an
// hour.
func replayClock(s float64) string {
	if s < 0 {
		s = 0
	}
	if s >= 3600 {
		n := int(s)
		return fmt.Sprintf("%d:%02d:%02d", n/3600, n/60%60, n%60)
	}
	tenths := int(math.Floor(s * 10))
	return fmt.Sprintf("%d:%02d.%d", tenths/600, tenths/10%60, tenths%10)
}

// replayHints are replay mode's hints, most used first.
var replayHints = []string{"space play/pause", "[/] mark", "</> speed", "./, step", "←/→ 5s", "{/} session", "esc leave"}

// replayHelp is the help screen's replay group, short enough for the
// help to fit at 80x24; the README has the glyphs.
func replayHelp() []key.Binding {
	h := func(keys, desc string) key.Binding { return key.NewBinding(key.WithHelp(keys, desc)) }
	return []key.Binding{
		h("w", "replay; space play/pause"),
		h("[/] </>", "mark / speed (1x-16x)"),
		h("./, {/}", "step / session · esc leaves"),
	}
}

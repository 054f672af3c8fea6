package ui

import (
	"context"
	"fmt"
	"sort"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// replaySpeeds are the speeds a replay plays at, slowest first.
var replaySpeeds = []float64{1, 2, 4, 8, 16}

const (
	// replayIdle is the longest pause a replay plays: a longer silence in
	// the recording (an agent waiting overnight) plays as this many
	// seconds of the recording's time, as asciinema's idle_time_limit.
	// The timeline and the clock keep the recording's own times.
	replayIdle = 2.0
	// replayFrame and replayMaxWait bound the wait between two ticks of a
	// playing replay: no faster than a frame, no slower than the clock
	// the status line shows needs.
	replayFrame   = 33 * time.Millisecond
	replayMaxWait = 250 * time.Millisecond
	// replayInlineBytes is the most output a seek feeds the emulator in
	// Update; a longer seek builds its screen off Update.
	replayInlineBytes = 1 << 20
	// replayLoadTimeout bounds the read of a recording, which may come
	// from another machine's engine.
	replayLoadTimeout = time.Minute
	// replayStep is how far ←/→ move.
	replayStep = 5.0
)

// replay plays one session's recording in the Live tab's pane: it feeds
// the recording's output through the console's own emulator (session's
// Terminal over vt, as the engine does) up to the playhead. It is driven
// by tick messages from an injected clock, so a test plays it without
// waiting. A seek replays from the start when it goes back.
type replay struct {
	eng  coord.Engine
	st   *styles
	now  func() time.Time
	tick func(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd

	id task.ID
	// sessions are the task's recorded sessions, oldest first, as the
	// detail listed them when the replay opened; want is the one asked
	// for ("" for the last recorded).
	sessions []store.Session
	want     string

	loading bool
	loadSeq int
	err     error
	rec     coord.Recording
	end     float64 // the last event's time

	term *session.Terminal
	next int     // rec.Events[:next] are in term
	pos  float64 // the playhead, seconds into the recording
	// mark is the index of the mark the playhead stands on (a jump put it
	// there), -1 when none.
	mark int

	playing bool
	speed   int       // index into replaySpeeds
	last    time.Time // when the playhead last moved on the clock
	from    float64   // where play last started: a pause counts from here at most
	tickSeq int       // the playing run's ticks; older ones are dropped

	// seeking is the newest seek being built off Update (0: none), and
	// resume whether play goes on after it.
	seeking, seekSeq int
	resume           bool

	cache replayCache
}

// replayCache is the screen fitted to a size, valid for one terminal at
// one version.
type replayCache struct {
	term    *session.Terminal
	version uint64
	w, h    int
	lines   []string
}

// replayMsg is a message for the replay; the root model routes every one
// to it.
type replayMsg interface{ forReplay() }

type replayLoadedMsg struct {
	seq int
	rec coord.Recording
	err error
}

type replayTickMsg struct {
	seq int
	at  time.Time
}

type replaySeekMsg struct {
	seq  int
	term *session.Terminal
	next int
	pos  float64
}

func (replayLoadedMsg) forReplay() {}
func (replayTickMsg) forReplay()   {}
func (replaySeekMsg) forReplay()   {}

// openReplay starts a replay of task id's session want ("" for its last
// recorded one); sessions are the task's sessions as the console knows
// them (those without a recording are left out). The command reads the
// recording through the engine.
func openReplay(eng coord.Engine, st *styles, now func() time.Time, tick func(time.Duration, func(time.Time) tea.Msg) tea.Cmd,
	id task.ID, want string, sessions []store.Session) (*replay, tea.Cmd) {
	r := &replay{eng: eng, st: st, now: now, tick: tick, id: id, want: want, mark: -1}
	for _, s := range sessions {
		if s.CastPath != "" {
			r.sessions = append(r.sessions, s)
		}
	}
	return r, r.load()
}

// load asks the engine for the recording of r.want, off Update.
func (r *replay) load() tea.Cmd {
	r.loadSeq++
	r.loading, r.err = true, nil
	r.playing = false
	r.tickSeq++
	seq, id, want := r.loadSeq, r.id, r.want
	rc, ok := r.eng.(coord.Recorder)
	if !ok {
		return func() tea.Msg {
			return replayLoadedMsg{seq: seq, err: fmt.Errorf("this engine cannot serve recordings; run `orchestra-tui stop` and start it again with this version")}
		}
	}
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), replayLoadTimeout)
		defer cancel()
		rec, err := rc.Recording(ctx, id, want)
		return replayLoadedMsg{seq: seq, rec: rec, err: err}
	}
}

// update handles the replay's own messages.
func (r *replay) update(msg replayMsg) tea.Cmd {
	switch msg := msg.(type) {
	case replayLoadedMsg:
		if msg.seq != r.loadSeq {
			return nil
		}
		r.loading = false
		if msg.err != nil {
			r.err = msg.err
			return nil
		}
		r.rec = msg.rec
		r.want = msg.rec.SessionID
		r.end = 0
		if n := len(r.rec.Events); n > 0 {
			r.end = r.rec.Events[n-1].Time
		}
		r.term = session.NewTerminal(max(r.rec.Cols, 1), max(r.rec.Rows, 1), -1, nil)
		r.next, r.pos, r.mark = 0, 0, -1
		return r.play()
	case replayTickMsg:
		if msg.seq != r.tickSeq || !r.playing {
			return nil
		}
		dt := msg.at.Sub(r.last).Seconds() * replaySpeeds[r.speed]
		r.last = msg.at
		r.advance(max(dt, 0))
		return r.schedule()
	case replaySeekMsg:
		if msg.seq != r.seeking {
			return nil
		}
		r.seeking = 0
		r.term, r.next, r.pos = msg.term, msg.next, msg.pos
		if r.resume {
			return r.play()
		}
	}
	return nil
}

// key handles a key in replay mode; leave says the operator left it.
func (r *replay) key(msg tea.KeyPressMsg) (cmd tea.Cmd, leave bool) {
	switch msg.String() {
	case "q", "esc":
		r.pause()
		return nil, true
	case "}":
		return r.switchSession(1), false
	case "{":
		return r.switchSession(-1), false
	}
	if r.term == nil {
		return nil, false // still loading, or it failed: only leaving works
	}
	switch msg.String() {
	case "space", "p":
		if r.playing {
			r.pause()
			return nil, false
		}
		if r.pos >= r.end && r.next >= len(r.rec.Events) {
			return r.seekThen(0, true), false // at the end: from the start
		}
		return r.play(), false
	case ".":
		r.pause()
		if r.next < len(r.rec.Events) {
			return r.seekIndex(r.next+1, r.rec.Events[r.next].Time, false), false
		}
	case ",":
		r.pause()
		if r.next > 0 {
			k := r.next - 1
			// Back one event: the screen as it was before the last one.
			at := 0.0
			if k > 0 {
				at = r.rec.Events[k-1].Time
			}
			return r.seekIndex(k, at, false), false
		}
	case ">", "+", "=":
		r.speed = min(r.speed+1, len(replaySpeeds)-1)
	case "<", "-", "_":
		r.speed = max(r.speed-1, 0)
	case "]":
		return r.jumpMark(1), false
	case "[":
		return r.jumpMark(-1), false
	case "right", "l":
		return r.seekThen(min(r.pos+replayStep, r.end), r.playing), false
	case "left", "h":
		return r.seekThen(max(r.pos-replayStep, 0), r.playing), false
	case "home", "g":
		return r.seekThen(0, r.playing), false
	case "end", "G":
		r.pause()
		return r.seekThen(r.end, false), false
	default:
		if s := msg.String(); len(s) == 1 && s[0] >= '0' && s[0] <= '9' {
			return r.seekThen(r.end*float64(s[0]-'0')/10, r.playing), false
		}
	}
	return nil, false
}

// switchSession replays the task's next (dir 1) or previous (-1)
// recorded session.
func (r *replay) switchSession(dir int) tea.Cmd {
	if len(r.sessions) == 0 || r.loading {
		return nil
	}
	i := r.sessionIndex()
	if i < 0 {
		i = len(r.sessions)
	}
	j := i + dir
	if j < 0 || j >= len(r.sessions) {
		return nil
	}
	r.want = r.sessions[j].ID
	r.term = nil
	return r.load()
}

// sessionIndex is the replayed session's index in r.sessions, -1 when
// it is not listed.
func (r *replay) sessionIndex() int {
	for i, s := range r.sessions {
		if s.ID == r.want {
			return i
		}
	}
	return -1
}

// play starts the playhead from where it stands.
func (r *replay) play() tea.Cmd {
	if r.term == nil || len(r.rec.Events) == 0 {
		return nil
	}
	r.playing = true
	r.mark = -1
	r.tickSeq++
	r.last = r.now()
	r.from = r.pos
	return r.schedule()
}

func (r *replay) pause() {
	r.playing = false
	r.tickSeq++
}

// advance moves the playhead dt seconds of the recording's time on,
// applying the events it passes. A pause longer than replayIdle is cut
// to it: the playhead jumps over the rest.
func (r *replay) advance(dt float64) {
	evs := r.rec.Events
	target := r.pos + dt
	for r.next < len(evs) {
		e := evs[r.next]
		if e.Time <= target {
			session.ReplayEvent(r.term, e)
			r.next++
			continue
		}
		from := r.quietSince()
		if target-from <= replayIdle || e.Time-from <= replayIdle {
			break
		}
		// The pause before e plays as replayIdle; what is left of dt
		// goes on after it.
		target = e.Time + (target - from - replayIdle)
		r.from = e.Time
	}
	r.pos = min(target, r.end)
	if r.next >= len(evs) && target >= r.end {
		r.pos = r.end
		r.pause()
	}
}

// quietSince is when the silence the playhead is in began: the last
// applied event, or where play started when that is later.
func (r *replay) quietSince() float64 {
	from := r.from
	if r.next > 0 {
		from = max(from, r.rec.Events[r.next-1].Time)
	}
	return from
}

// schedule asks for the next tick: when the next event is due at this
// speed (its pause cut to replayIdle), within a frame and replayMaxWait.
func (r *replay) schedule() tea.Cmd {
	if !r.playing || r.tick == nil {
		return nil
	}
	wait := replayMaxWait
	if r.next < len(r.rec.Events) {
		due := min(r.rec.Events[r.next].Time, r.quietSince()+replayIdle) - r.pos
		wait = min(max(time.Duration(due/replaySpeeds[r.speed]*float64(time.Second)), replayFrame), replayMaxWait)
	}
	seq := r.tickSeq
	return r.tick(wait, func(at time.Time) tea.Msg { return replayTickMsg{seq: seq, at: at} })
}

// jumpMark pauses on the next (dir 1) or previous (-1) mark.
func (r *replay) jumpMark(dir int) tea.Cmd {
	ms := r.rec.Marks
	i := -1
	if r.mark >= 0 {
		i = r.mark + dir
	} else if dir > 0 {
		i = sort.Search(len(ms), func(i int) bool { return ms[i].At > r.pos })
	} else {
		i = sort.Search(len(ms), func(i int) bool { return ms[i].At >= r.pos }) - 1
	}
	if i < 0 || i >= len(ms) {
		return nil
	}
	r.pause()
	cmd := r.seekThen(ms[i].At, false)
	r.mark = i
	return cmd
}

// seekThen moves the playhead to at (the events up to and including at
// applied) and plays on from there when resume is set.
func (r *replay) seekThen(at float64, resume bool) tea.Cmd {
	k := sort.Search(len(r.rec.Events), func(i int) bool { return r.rec.Events[i].Time > at })
	return r.seekIndex(k, at, resume)
}

// seekIndex shows the screen after the first k events, the playhead at
// pos. Forward it feeds the events in between; back it replays from the
// start. A seek that would feed more than replayInlineBytes builds a new
// emulator off Update and keeps the current screen until it is done.
func (r *replay) seekIndex(k int, pos float64, resume bool) tea.Cmd {
	r.mark = -1
	r.pause()
	from := r.next
	if k < r.next {
		from = 0
	}
	n := 0
	for _, e := range r.rec.Events[from:k] {
		n += len(e.Data)
	}
	if n <= replayInlineBytes {
		if from == 0 && r.next > 0 {
			r.term = session.NewTerminal(max(r.rec.Cols, 1), max(r.rec.Rows, 1), -1, nil)
		}
		for _, e := range r.rec.Events[from:k] {
			session.ReplayEvent(r.term, e)
		}
		r.next, r.pos = k, pos
		if resume {
			return r.play()
		}
		return nil
	}
	r.seekSeq++
	r.seeking, r.resume = r.seekSeq, resume
	seq, evs, cols, rows := r.seekSeq, r.rec.Events[:k], r.rec.Cols, r.rec.Rows
	return func() tea.Msg {
		t := session.NewTerminal(max(cols, 1), max(rows, 1), -1, nil)
		for _, e := range evs {
			session.ReplayEvent(t, e)
		}
		return replaySeekMsg{seq: seq, term: t, next: k, pos: pos}
	}
}

// screen is the replayed screen fitted to w×h, or what is happening
// instead.
func (r *replay) screen(w, h int) []string {
	switch {
	case r.loading:
		return block([]string{r.st.dim.Render("reading the recording…")}, w, h)
	case r.err != nil:
		return block(wrapStyled(r.st.statusErr.Render, "cannot replay: "+r.err.Error(), w), w, h)
	case r.term == nil:
		return block(nil, w, h)
	}
	c := &r.cache
	if c.term == r.term && c.version == r.term.Version() && c.w == w && c.h == h {
		return c.lines
	}
	lines := fitScreen(r.term, w, h)
	// The recording is shown at the size it was recorded at (at the
	// playhead: a resize in it is replayed), cut or padded to the pane,
	// and marked so, as a pane another console sized is.
	if cols, rows := r.term.Size(); (cols != w || rows != h) && h > 0 {
		lines[h-1] = markRecordedSize(lines[h-1], cols, rows, w, r.st.focus.Render)
	}
	*c = replayCache{term: r.term, version: r.term.Version(), w: w, h: h, lines: lines}
	return c.lines
}

// markRecordedSize ends a replayed screen's last row with the size its
// recording had at the playhead.
func markRecordedSize(line string, cols, rows, w int, style func(...string) string) string {
	return markSize(line, fmt.Sprintf(" recorded at %dx%d ", cols, rows), fmt.Sprintf(" %dx%d ", cols, rows), w, style)
}

func wrapStyled(style func(...string) string, s string, w int) []string {
	out := wrap(s, w)
	for i, l := range out {
		out[i] = style(l)
	}
	return out
}

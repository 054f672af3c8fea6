package notify

import "time"

// DebounceWindow is how long after telling the operator that a session
// needs them the same news about the same session stays quiet: a pane
// flagged stuck, resubmitted and stuck again three times in a minute is
// one alert, not three.
const DebounceWindow = 5 * time.Minute

// Debouncer passes the first notice of each kind per session (per task for
// a notice with no session) and holds back repeats within its window. The
// zero value is not ready: use NewDebouncer. It is not safe for concurrent
// use; the engine calls it from its loop.
type Debouncer struct {
	window time.Duration
	last   map[debounceKey]time.Time
}

type debounceKey struct{ who, kind string }

// NewDebouncer returns a Debouncer with the given window.
func NewDebouncer(window time.Duration) *Debouncer {
	return &Debouncer{window: window, last: map[debounceKey]time.Time{}}
}

// Allow reports whether n should go out at now, and if so remembers it.
// Another kind of news (a stuck pane that then awaits review) always goes
// out.
func (d *Debouncer) Allow(n Notice, now time.Time) bool {
	k := debounceKey{who: n.SessionID, kind: n.Kind}
	if k.who == "" {
		k.who = "task:" + string(n.TaskID)
	}
	if at, ok := d.last[k]; ok && now.Sub(at) < d.window {
		return false
	}
	d.last[k] = now
	for old, at := range d.last { // keep the map to the sessions of the window
		if now.Sub(at) >= d.window {
			delete(d.last, old)
		}
	}
	return true
}

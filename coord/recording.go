package coord

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// Recording is a session's recording as a replay plays it: the output and
// resize events, where it stopped if it is damaged, and the marks of what
// the ledger says happened, on the recording's clock.
type Recording struct {
	TaskID     task.ID
	SessionID  string
	Cols, Rows int
	// Events are the output ("o"), resize ("r") and marker ("m") events.
	Events []session.CastEvent
	// Damaged says where and why the recording could not be read further;
	// the events are the ones before it.
	Damaged string `json:",omitempty"`
	Marks   []Mark
}

// Mark is one ledger event placed on a recording's timeline.
type Mark struct {
	// At is seconds since the recording began.
	At    float64
	Kind  task.Kind
	Label string // "brief", "correction", "stuck", "renewal refused", "sealed", "exited", "marker"
	Text  string
}

// Recorder is an engine that serves recordings (engine.Client, the
// engine's relay, Opened); the console looks for it.
type Recorder interface {
	Recording(ctx context.Context, id task.ID, sessionID string) (Recording, error)
}

// RecordingElsewhere is a recording that is not on this machine: the
// engine Holder ran its session.
type RecordingElsewhere struct{ Holder, SessionID string }

func (e *RecordingElsewhere) Error() string {
	return fmt.Sprintf("the recording of session %s is not on this machine (engine %s ran it)", e.SessionID, e.Holder)
}

// maxReplayBytes bounds the output a replay carries, below the wire's
// frame limit.
const maxReplayBytes = 32 << 20

// Recording reads a session's recording from this machine.
func (o *Opened) Recording(ctx context.Context, id task.ID, sessionID string) (Recording, error) {
	return ReadRecording(ctx, o.Store, o.Repo.Root, id, sessionID)
}

// ReadRecording reads the recording of task id's session sessionID (""
// for its last recorded one) under root, with its ledger marks. A damaged
// recording gives the events up to the damage and says where in Damaged.
func ReadRecording(ctx context.Context, st store.Store, root string, id task.ID, sessionID string) (Recording, error) {
	rec := Recording{TaskID: id}
	ss, err := st.SessionList(ctx, id)
	if err != nil {
		return rec, err
	}
	var s *store.Session
	for i := len(ss) - 1; i >= 0; i-- {
		if ss[i].CastPath != "" && (sessionID == "" || ss[i].ID == sessionID) {
			s = &ss[i]
			break
		}
	}
	if s == nil {
		return rec, fmt.Errorf("task %s has no recorded session", id.Short())
	}
	rec.SessionID = s.ID
	if !filepath.IsLocal(s.CastPath) {
		return rec, fmt.Errorf("session %s's recording %q is outside the repository", s.ID, s.CastPath)
	}
	f, err := os.Open(filepath.Join(root, s.CastPath))
	if errors.Is(err, os.ErrNotExist) {
		return rec, &RecordingElsewhere{Holder: s.Holder, SessionID: s.ID}
	}
	if err != nil {
		return rec, err
	}
	defer f.Close()
	cs, err := session.NewCastScanner(f)
	if err != nil {
		return rec, err
	}
	h := cs.Header()
	rec.Cols, rec.Rows = h.Width, h.Height
	n := 0
	for cs.Scan() {
		ev := cs.Event()
		if ev.Code == "i" {
			continue
		}
		if n += len(ev.Data); n > maxReplayBytes {
			rec.Damaged = fmt.Sprintf("the recording holds more than %d MiB of output; the replay stops at %.1f s", maxReplayBytes>>20, ev.Time)
			break
		}
		rec.Events = append(rec.Events, ev)
	}
	if err := cs.Err(); err != nil {
		rec.Damaged = fmt.Sprintf("%v; the replay stops there", err)
	}
	start := time.Unix(h.Timestamp, 0)
	if h.StartNS != 0 {
		start = time.Unix(0, h.StartNS)
	}
	evs, err := st.EventList(ctx, store.EventListParams{TaskID: id})
	if err != nil {
		return rec, err
	}
	rec.Marks = RecordingMarks(evs, rec.Events, s.ID, start)
	if err := nameCorrections(ctx, st, id, s.ID, rec.Marks); err != nil {
		return rec, err
	}
	return rec, nil
}

// nameCorrections gives each correction mark of session sessionID the
// text of the decision it delivered (the ledger's event only says that one
// was): the session's deliveries, in the order they were recorded, are its
// delivery events'. When the two counts differ (an engine typed a decision
// again after taking a session up) the events' own texts stay.
func nameCorrections(ctx context.Context, st store.Store, id task.ID, sessionID string, marks []Mark) error {
	ds, err := st.DeliveryList(ctx, id)
	if err != nil {
		return err
	}
	decs, err := st.DecisionList(ctx, id)
	if err != nil {
		return err
	}
	text := map[string]string{}
	for _, d := range decs {
		text[d.ID] = d.Text
	}
	var texts []string
	for _, d := range ds {
		if d.SessionID == sessionID {
			texts = append(texts, text[d.DecisionID])
		}
	}
	var idx []int
	for i, m := range marks {
		if m.Label == "correction" {
			idx = append(idx, i)
		}
	}
	if len(idx) != len(texts) {
		return nil
	}
	for k, i := range idx {
		if texts[k] != "" {
			marks[i].Text = texts[k]
		}
	}
	return nil
}

// RecordingMarks places the ledger events of session sessionID that a
// replay marks on the clock of a recording that began at start, with the
// recording's own markers; a mark past the recording's end (it was cut, or
// is damaged) is placed at its end.
func RecordingMarks(evs []task.Event, casts []session.CastEvent, sessionID string, start time.Time) []Mark {
	end := 0.0
	if len(casts) > 0 {
		end = casts[len(casts)-1].Time
	}
	var marks []Mark
	for _, ev := range evs {
		if ev.SessionID != sessionID {
			continue
		}
		label := markLabel(ev)
		if label == "" {
			continue
		}
		at := min(max(ev.At.Sub(start).Seconds(), 0), end)
		marks = append(marks, Mark{At: at, Kind: ev.Kind, Label: label, Text: ev.Text})
	}
	for _, c := range casts {
		if c.Code == "m" {
			marks = append(marks, Mark{At: c.Time, Label: "marker", Text: c.Data})
		}
	}
	sortMarks(marks)
	return marks
}

func sortMarks(ms []Mark) {
	for i := 1; i < len(ms); i++ {
		for j := i; j > 0 && ms[j].At < ms[j-1].At; j-- {
			ms[j], ms[j-1] = ms[j-1], ms[j]
		}
	}
}

// markLabel names the events a replay marks; "" for the others.
func markLabel(ev task.Event) string {
	switch ev.Kind {
	case task.EvBriefDelivered:
		return "brief"
	case task.EvDecisionDelivered:
		return "correction"
	case task.EvSessionStuck:
		return "stuck"
	case task.EvArtifactSealed:
		return "sealed"
	case task.EvSessionExited:
		return "exited"
	case task.EvRefusal:
		if ev.Reason == task.ReasonRenewalNoProgress || ev.Reason == task.ReasonRenewalCap {
			return "renewal refused"
		}
	}
	return ""
}

package soak

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// finalPoint marks the final, undisturbed run among the kill points.
const finalPoint = 0

// markFinal records where the final run's events begin.
func (s *soak) markFinal() {
	seq, err := s.st.EventLastSeq(context.Background())
	if err != nil {
		return
	}
	s.mu.Lock()
	s.points = append(s.points, killPoint{n: finalPoint, after: seq})
	s.mu.Unlock()
}

// pointOf names the run that wrote the event of sequence seq.
func (s *soak) pointOf(seq int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	name := "before the first run"
	for _, p := range s.points {
		if seq <= p.after {
			break
		}
		if p.n == finalPoint {
			name = "final run"
		} else {
			name = fmt.Sprintf("kill point %d (killed after %s)", p.n, p.ran.Round(time.Millisecond))
		}
	}
	return name
}

// explain returns a charged task's ledger, each event under the run that
// wrote it, so a failure names the kill point that charged the attempt.
func (s *soak) explain(id string, attempt int) string {
	evs, err := s.st.EventList(context.Background(), store.EventListParams{TaskID: task.ID(id)})
	if err != nil {
		return fmt.Sprintf("task %s at attempt %d: its events: %v", id, attempt, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "task %s ended at attempt %d; its events by the run that wrote them:", id, attempt)
	last := ""
	for _, ev := range evs {
		if p := s.pointOf(ev.Seq); p != last {
			fmt.Fprintf(&b, "\n  == %s", p)
			last = p
		}
		line := ev.Text
		if len(line) > 240 {
			line = line[:240] + "…"
		}
		fmt.Fprintf(&b, "\n    %d %s %s", ev.Seq, ev.Kind, line)
		if ev.Reason != "" {
			fmt.Fprintf(&b, " [%s]", ev.Reason)
		}
	}
	return b.String()
}

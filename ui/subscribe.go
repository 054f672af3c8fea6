package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// FrameInterval is the shortest time between two redraws caused by pane
// output: about 60 frames a second (the console's frame rate), however
// fast agents write.
const FrameInterval = time.Second / 60

// Subscribe forwards the engine's notices to the program from one
// goroutine. Event notices are sent as they come, in order; pane notices,
// and snapshot notices (a snapshot that came with no event, which the
// model reads again), are coalesced into at most one redraw per
// FrameInterval, and none at all while nothing changes. The first pane notice after a quiet frame is
// sent at once and only those that follow it wait for the frame's end, so
// a key echoed by an idle pane is not held back by the coalescing. stop
// ends the subscription and waits for the goroutine to finish.
func Subscribe(p *tea.Program, e coord.Engine) (stop func()) {
	return forward(p.Send, e, FrameInterval)
}

func forward(send func(tea.Msg), e coord.Engine, frame time.Duration) (stop func()) {
	ch, unsubscribe := e.Subscribe()
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		// The goroutine owns the subscription: it replaces it after falling
		// behind, so only it may end it.
		defer func() { unsubscribe() }()
		var (
			pending = map[task.ID]struct{}{}
			// snap: a snapshot notice came since the last redraw
			snap  bool
			timer *time.Timer
			// fire is the end of the frame that began with the last
			// redraw; nil once a frame passed with no pane notice.
			fire <-chan time.Time
		)
		flush := func() {
			ids := make([]task.ID, 0, len(pending))
			for id := range pending {
				ids = append(ids, id)
			}
			clear(pending)
			send(panesMsg{ids: ids, snap: snap})
			snap = false
			timer = time.NewTimer(frame)
			fire = timer.C
		}
		for {
			select {
			case <-done:
				if timer != nil {
					timer.Stop()
				}
				return
			case n, ok := <-ch:
				if !ok {
					return
				}
				if n.Behind {
					// This console read too slowly and the engine ended
					// the subscription rather than hold its events
					// without bound. Take a fresh one and tell the model,
					// which rereads what it shows from the ledger.
					unsubscribe()
					ch, unsubscribe = e.Subscribe()
					send(behindMsg{})
					continue
				}
				if n.Event != nil {
					send(eventMsg{ev: *n.Event})
					// The model reads the snapshot on an event, and the
					// engine stored the one the event led to before it.
					snap = false
				}
				if n.Snapshot {
					snap = true
				}
				if n.Pane != "" {
					pending[n.Pane] = struct{}{}
				}
				if (n.Pane != "" || n.Snapshot) && fire == nil {
					flush() // the first after a quiet frame
				}
			case <-fire:
				fire = nil
				if len(pending) > 0 || snap {
					flush()
				}
			}
		}
	}()
	return func() {
		select {
		case <-done:
		default:
			close(done)
		}
		<-finished
	}
}

// behindMsg says the console's subscription fell behind and was renewed:
// events in between were not seen one by one.
type behindMsg struct{}

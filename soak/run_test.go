package soak

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// start starts the process the soak kills, its output appended to the
// soak's log.
func (s *soak) start(what string) *exec.Cmd {
	fmt.Fprintf(s.log, "\n== %s (%s) at %s\n", what, s.mode, time.Now().Format(time.RFC3339Nano))
	var cmd *exec.Cmd
	if s.mode == hosts {
		// As engine.Spawn starts it for a console, in a session of its
		// own, but without --foreground's caller detaching from it.
		cmd = exec.Command(s.bin, "engine", "--foreground", "-C", s.root)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	} else {
		cmd = exec.Command(s.bin, "run", "--headless", "--wait", "-C", s.root)
	}
	cmd.Dir = s.root
	cmd.Stdout, cmd.Stderr = s.log, s.log
	require.NoError(s.t, cmd.Start())
	return cmd
}

// live reports whether ev shows a session working for the engine that
// wrote it: a new one confirmed (its brief delivered) or one a session
// host kept running, taken up.
func live(ev task.Event) bool {
	return ev.Kind == task.EvBriefDelivered || ev.Kind == task.EvSessionAdopted
}

// firstLive returns the first event after seq that shows a live session.
func (s *soak) firstLive(ctx context.Context, seq int64) (task.Event, bool, error) {
	evs, err := s.st.EventList(ctx, store.EventListParams{AfterSeq: seq})
	if err != nil {
		return task.Event{}, false, err
	}
	for _, ev := range evs {
		if live(ev) {
			return ev, true, nil
		}
	}
	return task.Event{}, false, nil
}

// watch sends the task of the first live session after seq, read from the
// store the engine writes, until ctx ends.
func (s *soak) watch(ctx context.Context, seq int64) <-chan task.ID {
	out := make(chan task.ID, 1)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if ev, ok, _ := s.firstLive(ctx, seq); ok {
				out <- ev.TaskID
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// runAndKill starts the engine, sends a correction once a session is
// live, and kills the engine with SIGKILL at a random point.
func (s *soak) runAndKill(k int) {
	t := s.t
	seq, err := s.st.EventLastSeq(context.Background())
	require.NoError(t, err)
	began := time.Now()
	cmd := s.start("kill point " + strconv.Itoa(k+1))
	ctx, cancel := context.WithCancel(context.Background())
	confirmed := s.watch(ctx, seq)
	// A kill point anywhere from the first instants (mid-start, mid-
	// reconcile, mid-adoption) to five seconds in (sessions, gates,
	// corrections); one in four runs up to twenty seconds, so tasks also
	// finish (and new ones are added) between kills, not only in the
	// final run.
	d := time.Duration(100+s.rng.IntN(5000)) * time.Millisecond
	if s.rng.IntN(4) == 0 {
		d = time.Duration(5000+s.rng.IntN(15000)) * time.Millisecond
	}
	s.mu.Lock()
	s.points = append(s.points, killPoint{n: k + 1, after: seq, ran: d})
	s.mu.Unlock()
	killAt := time.NewTimer(d)
	defer killAt.Stop()
	var wg sync.WaitGroup
	select {
	case id := <-confirmed:
		wg.Go(func() { s.correct(id, k) })
		<-killAt.C
	case <-killAt.C:
	}
	cancel()
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	wg.Wait()
	// The figure is the ledger's: the time the engine wrote the event,
	// not when the watch above read it.
	ev, ok, err := s.firstLive(context.Background(), seq)
	require.NoError(t, err)
	if ok {
		s.mu.Lock()
		s.latency = append(s.latency, max(ev.At.Sub(began), 0))
		if ev.Kind == task.EvSessionAdopted {
			s.adopted++
		}
		s.mu.Unlock()
	}
}

// correct sends one correction through the running engine; one the engine
// acknowledged must never be lost.
func (s *soak) correct(id task.ID, k int) {
	text := fmt.Sprintf("soak correction %d for %s", k, id)
	s.mu.Lock()
	s.sent++
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := exec.CommandContext(ctx, s.bin, "correct", "-C", s.root, string(id), text).Run(); err == nil {
		s.mu.Lock()
		s.accepted = append(s.accepted, text)
		s.mu.Unlock()
	}
}

// finalRun lets the last engine bring every task to rest undisturbed and
// stop cleanly.
func (s *soak) finalRun() {
	t := s.t
	s.markFinal()
	if s.mode == headless {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		defer cancel()
		fmt.Fprintf(s.log, "\n== final run (%s)\n", s.mode)
		out, err := exec.CommandContext(ctx, s.bin, "run", "--headless", "-C", s.root).CombinedOutput()
		require.NoError(t, err, "the final run:\n%s", out)
		return
	}
	cmd := s.start("final run")
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		done, err := s.allAtRest(ctx)
		require.NoError(t, err)
		if done {
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the final engine exited before every task was at rest: %v\n%s", err, s.tail())
		case <-ctx.Done():
			t.Fatalf("tasks not at rest after 10 minutes: %+v\n%s", s.status(), s.tail())
		case <-tick.C:
		}
	}
	out, err := exec.CommandContext(ctx, s.bin, "stop", "-C", s.root).CombinedOutput()
	require.NoError(t, err, "stop:\n%s", out)
	select {
	case err := <-exited:
		require.NoError(t, err, "the final engine's exit:\n%s", s.tail())
	case <-ctx.Done():
		t.Fatalf("the engine did not exit after stop:\n%s", s.tail())
	}
}

// tail returns the end of the runs' log.
func (s *soak) tail() string {
	b, _ := os.ReadFile(s.log.Name())
	if len(b) > 8000 {
		b = b[len(b)-8000:]
	}
	return string(b)
}

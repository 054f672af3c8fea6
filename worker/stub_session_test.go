package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// stubSession is a Session whose agent is the test: its screen is what the
// test draws, its readiness what the test says, and what is typed into it
// is recorded in order. The worker's logic above it (confirm, ordered
// input, the sentinel watch, the artifact's validation, the exit's
// reading) is the real one; under testing/synctest its timers are the
// bubble's, so a settle or quiet period costs nothing.
type stubSession struct {
	ready   chan error    // WaitReady returns what is sent here
	typedC  chan struct{} // signalled on every typing
	changed chan struct{}
	done    chan struct{}

	mu      sync.Mutex
	screen  string
	version uint64
	typed   []string // "deliver: text", "send: text", "submit"
	notices []string
	accept  func(text string) error // the result of typing text; nil accepts
	exit    int
}

func newStubSession() *stubSession {
	return &stubSession{ready: make(chan error, 1), typedC: make(chan struct{}, 64),
		changed: make(chan struct{}, 1), done: make(chan struct{}), exit: -1}
}

// draw shows screen as the agent's new screen.
func (s *stubSession) draw(screen string) {
	s.mu.Lock()
	s.screen = screen
	s.version++
	s.mu.Unlock()
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// end makes the agent exit with code.
func (s *stubSession) end(code int) {
	s.mu.Lock()
	s.exit = code
	s.mu.Unlock()
	close(s.done)
}

func (s *stubSession) typedAll() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.typed...)
}

func (s *stubSession) record(what, text string) error {
	s.mu.Lock()
	entry := what
	if text != "" {
		entry += ": " + text
	}
	s.typed = append(s.typed, entry)
	accept := s.accept
	s.mu.Unlock()
	s.typedC <- struct{}{}
	if accept != nil {
		return accept(text)
	}
	return nil
}

func (s *stubSession) View() session.View          { return stubView{s} }
func (s *stubSession) Write(b []byte) error        { return s.record("write", string(b)) }
func (s *stubSession) Paste(text string) error     { return s.record("paste", text) }
func (s *stubSession) Resize(cols, rows int) error { return nil }
func (s *stubSession) Size() (cols, rows int)      { return 80, 24 }
func (s *stubSession) Pid() int                    { return 1 << 22 }
func (s *stubSession) Changed() <-chan struct{}    { return s.changed }
func (s *stubSession) Done() <-chan struct{}       { return s.done }
func (s *stubSession) Stop(grace time.Duration) error {
	select {
	case <-s.done:
	default:
		s.end(128 + 15)
	}
	return nil
}

func (s *stubSession) ExitCode() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.exit
}

func (s *stubSession) Notice(line string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.notices = append(s.notices, line)
	return nil
}

func (s *stubSession) WaitReady(ctx context.Context) error {
	select {
	case err := <-s.ready:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return &task.Refusal{Reason: task.ReasonSessionExited, Detail: "exited"}
	}
}

func (s *stubSession) DeliverChecked(ctx context.Context, text string) error {
	return s.record("deliver", text)
}

func (s *stubSession) SendChecked(ctx context.Context, text string) error {
	return s.record("send", text)
}

func (s *stubSession) SubmitChecked(ctx context.Context) error { return s.record("submit", "") }

type stubView struct{ s *stubSession }

func (v stubView) Size() (cols, rows int)           { return 80, 24 }
func (v stubView) Render() string                   { return v.Text() }
func (v stubView) Cursor() (x, y int, visible bool) { return 0, 0, false }
func (v stubView) Title() string                    { return "" }
func (v stubView) Scrollback(n int) []string        { return nil }

func (v stubView) Text() string {
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	return v.s.screen
}

func (v stubView) Version() uint64 {
	v.s.mu.Lock()
	defer v.s.mu.Unlock()
	return v.s.version
}

// stubRun is a run over a stub session in a real worktree (a temporary
// directory behind the real jail), with the state directory's changes
// signalled by the test instead of inotify: an inotify read is not a
// wait synctest can see through.
type stubRun struct {
	*Run
	sess    *stubSession
	dir     string
	reports chan Report
	changes chan struct{}
}

// startStub starts a run of the implement phase over a stub session; it
// must be called inside a synctest bubble. tweak adjusts the assignment.
// The agent exits when the test ends, so every goroutine of the run
// returns inside the bubble.
func startStub(t *testing.T, tweak func(*Params)) *stubRun {
	t.Helper()
	dir := t.TempDir()
	reports := make(chan Report, 64)
	p := Params{
		TaskID: task.ID("T" + strings.ReplaceAll(t.Name(), "/", "-")), SessionID: "S1", Token: 7, Phase: task.PhaseImplement,
		Spec: session.Spec{Name: "stub", Delivery: session.DeliveryType, Quiet: session.Duration{Duration: 200 * time.Millisecond}},
		Dir:  dir, Cols: 80, Rows: 24, Settle: 100 * time.Millisecond, SampleEvery: time.Second,
		Reports: reports,
	}
	if tweak != nil {
		tweak(&p)
	}
	wt, volatile, err := openWorktree(&p)
	require.NoError(t, err)
	sess := newStubSession()
	r := newRun(context.Background(), p, wt, sess, volatile, time.Now())
	if p.Spec.Delivery == session.DeliveryArg || p.Spec.Delivery == session.DeliveryFile {
		r.briefedAt.Store(p.Now().UnixNano())
		r.in.briefed = true
	}
	changes := make(chan struct{}, 64)
	r.begin(true, changes, func() {})
	sr := &stubRun{Run: r, sess: sess, dir: dir, reports: reports, changes: changes}
	t.Cleanup(func() {
		select {
		case <-sess.done:
		default:
			sess.end(0)
		}
		for {
			select {
			case <-reports: // drained, so the exit's report never blocks
			case <-r.Done():
				return
			}
		}
	})
	return sr
}

// next returns the next report, failing the test after a simulated day.
func (sr *stubRun) next(t *testing.T) Report {
	t.Helper()
	guard := time.NewTimer(24 * time.Hour)
	defer guard.Stop()
	select {
	case rep := <-sr.reports:
		return rep
	case <-guard.C:
		t.Fatal("no report within a simulated day")
		return Report{}
	}
}

// nextKind skips reports until one of kind; the skipped are returned too.
func (sr *stubRun) nextKind(t *testing.T, kind ReportKind) (Report, []Report) {
	t.Helper()
	var skipped []Report
	for {
		rep := sr.next(t)
		if rep.Kind == kind {
			return rep, skipped
		}
		skipped = append(skipped, rep)
	}
}

// waitTyped returns once n typings were recorded.
func (sr *stubRun) waitTyped(t *testing.T, n int) []string {
	t.Helper()
	guard := time.NewTimer(24 * time.Hour)
	defer guard.Stop()
	for {
		if typed := sr.sess.typedAll(); len(typed) >= n {
			return typed
		}
		select {
		case <-sr.sess.typedC:
		case <-guard.C:
			t.Fatalf("typed %q, not %d inputs, within a simulated day", sr.sess.typedAll(), n)
		}
	}
}

// write writes a file of the state directory, as the agent does, and
// signals the change as the directory's watch would.
func (sr *stubRun) write(t *testing.T, rel, content string) {
	t.Helper()
	path := filepath.Join(sr.dir, filepath.FromSlash(rel))
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, []byte(content), 0o644))
	sr.changes <- struct{}{}
}

// exists reports whether rel exists in the worktree.
func (sr *stubRun) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(sr.dir, filepath.FromSlash(rel)))
	return !errors.Is(err, os.ErrNotExist)
}

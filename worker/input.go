package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/orchestra-tui/orchestra-tui/jail"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// InputKind names what is being typed into a pane.
type InputKind string

// Input kinds.
const (
	InputBrief    InputKind = "brief"
	InputDecision InputKind = "decision"
	InputRefusal  InputKind = "refusal"
	InputResubmit InputKind = "resubmit"
	// InputContinue is typed at a limit's reset so the agent goes on in
	// the same conversation.
	InputContinue InputKind = "continue"
)

// Input is one message for the pane. Done, if set, receives the typing's
// result exactly once.
type Input struct {
	Kind InputKind
	ID   string // decision id, for decisions
	Text string
	Mode session.ResubmitMode // for resubmits
	Done chan<- error
}

// keyedSender is a session that remembers, across engines, which named
// inputs it began to type (a session host): a decision is sent with its
// id, so an engine that takes the session up again knows whether the
// decision reached the pane.
type keyedSender interface {
	SendKeyed(ctx context.Context, key, text string) error
}

// ErrClosed means the session ended before the input could be typed.
var ErrClosed = errors.New("the session has ended")

// inputQueue orders a pane's input: the brief first, then everything else in
// arrival order. Inputs other than the brief wait until the brief is typed,
// so a correction never reaches an agent before the brief it corrects.
type inputQueue struct {
	mu       sync.Mutex
	items    []Input
	briefed  bool
	closed   bool
	signal   chan struct{}
	lastText string
}

func newInputQueue() *inputQueue { return &inputQueue{signal: make(chan struct{}, 1)} }

func (q *inputQueue) push(in Input) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		if in.Done != nil {
			in.Done <- ErrClosed
		}
		return
	}
	q.items = append(q.items, in)
	q.mu.Unlock()
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// next returns the next input that may be typed now, if any.
func (q *inputQueue) next() (Input, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, in := range q.items {
		if in.Kind == InputBrief || q.briefed {
			q.items = append(q.items[:i], q.items[i+1:]...)
			return in, true
		}
	}
	return Input{}, false
}

func (q *inputQueue) close() {
	q.mu.Lock()
	q.closed = true
	items := q.items
	q.items = nil
	q.mu.Unlock()
	for _, in := range items {
		if in.Done != nil {
			in.Done <- ErrClosed
		}
	}
	select {
	case q.signal <- struct{}{}:
	default:
	}
}

// Send queues an input for the pane. It never blocks.
func (r *Run) Send(in Input) { r.in.push(in) }

func (r *Run) deliverInputs(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.in.signal:
		}
		for {
			in, ok := r.in.next()
			if !ok {
				break
			}
			err := r.typeInput(ctx, in)
			if in.Done != nil {
				in.Done <- err
			}
			var ref *task.Refusal
			switch {
			case err == nil:
				r.report(Report{Kind: InputDelivered, Input: in.Kind, InputID: in.ID})
			case errors.As(err, &ref) && ref.Reason == task.ReasonInputNotAccepted:
				r.report(Report{Kind: InputRefused, Input: in.Kind, InputID: in.ID, Refusal: ref})
			}
		}
	}
}

// sent reports whether err still means the input's bytes reached the pty:
// none, or the program did not visibly take them.
func sent(err error) bool {
	var ref *task.Refusal
	return err == nil || (errors.As(err, &ref) && ref.Reason == task.ReasonInputNotAccepted)
}

// DecisionText is how a correction is typed into a pane: one pasted message
// with a header marking it as a human decision that overrides the plan.
func DecisionText(text string) string {
	return task.DecisionHeader + " " + strings.TrimSpace(text)
}

// RefusalText is how an artifact refusal is typed back into a pane, so the
// agent can fix the artifact and write the sentinel again.
func RefusalText(ref *task.Refusal, phase task.Phase) string {
	return task.RefusalPrefix + " " + ref.Error() + " Fix " + task.ArtifactPath(phase) +
		" and then write " + task.SentinelPath + " again."
}

// typeInput types one input into the pane and confirms the agent took it
// (session.DeliverChecked and friends): the submit key is re-sent a bounded
// number of times, then the input is refused with what the screen shows.
func (r *Run) typeInput(ctx context.Context, in Input) error {
	if !r.p.Spec.Types() {
		// A shell would run the text: it goes to the brief file instead.
		switch in.Kind {
		case InputBrief:
			r.in.mu.Lock()
			r.in.briefed = true
			r.in.mu.Unlock()
			if err := writeBrief(r.wt, in.Text); err != nil {
				return err
			}
			err := r.sess.Notice(briefNotice(r.p.Phase))
			r.freshSample(ctx)
			return err
		case InputResubmit:
			return r.sess.Notice(briefNotice(r.p.Phase))
		default:
			return r.appendBrief(in)
		}
	}
	switch in.Kind {
	case InputBrief:
		err := r.sess.DeliverChecked(ctx, in.Text)
		if sent(err) {
			r.briefedAt.CompareAndSwap(0, r.p.Now().UnixNano())
		}
		r.in.mu.Lock()
		r.in.briefed = true
		r.in.lastText = in.Text
		r.in.mu.Unlock()
		// The brief's echo is on the screen now: the sample the
		// coordinator takes as the lease's baseline on this delivery's
		// report must hold it, or the echo would renew the lease of an
		// agent that never did anything.
		r.freshSample(ctx)
		return err
	case InputResubmit:
		switch in.Mode {
		case session.ResubmitBrief, session.ResubmitLastInput:
			r.in.mu.Lock()
			last := r.in.lastText
			r.in.mu.Unlock()
			if last != "" {
				return r.sess.DeliverChecked(ctx, last)
			}
			return r.sess.SubmitChecked(ctx)
		default:
			return r.sess.SubmitChecked(ctx)
		}
	case InputContinue:
		if in.Text == session.LimitResumeSubmit {
			return r.sess.SubmitChecked(ctx)
		}
		return r.sess.SendChecked(ctx, in.Text)
	default:
		r.in.mu.Lock()
		r.in.lastText = in.Text
		r.in.mu.Unlock()
		if ks, ok := r.sess.(keyedSender); ok && in.Kind == InputDecision && in.ID != "" {
			return ks.SendKeyed(ctx, in.ID, in.Text)
		}
		return r.sess.SendChecked(ctx, in.Text)
	}
}

// briefNotice is the one line a file-delivery pane shows in place of its
// brief.
func briefNotice(p task.Phase) string {
	return "orchestra: the brief for phase " + string(p) + " is in " + task.BriefPath + " (nothing is typed into this pane)"
}

// writeBrief writes the brief of a file-delivery harness, through the
// worktree's jail.
func writeBrief(wt *jail.Dir, text string) error {
	if err := wt.WriteFile(task.BriefPath, []byte(text), 0o600); err != nil {
		return fmt.Errorf("write the brief to %s: %w", task.BriefPath, err)
	}
	return nil
}

// appendBrief adds a later message (a correction, a refusal) to the brief
// file of a file-delivery harness and points the pane at it.
func (r *Run) appendBrief(in Input) error {
	old, err := r.wt.ReadFile(task.BriefPath, maxBriefFile)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("add to %s: %w", task.BriefPath, err)
	}
	text := string(old) + "\n\n" + strings.TrimSpace(in.Text) + "\n"
	if err := writeBrief(r.wt, text); err != nil {
		return err
	}
	what := "a human decision was"
	if in.Kind == InputRefusal {
		what = "the artifact's refusal was"
	}
	return r.sess.Notice("orchestra: " + what + " added to the end of " + task.BriefPath)
}

// maxBriefFile bounds the brief file read back before a message is added
// to it: the agent may have replaced it with anything.
const maxBriefFile = 4 << 20

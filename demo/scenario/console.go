package scenario

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/ui"
)

// Console is the demo's operator beside the console: it acts through the
// engine's command path (resubmit, correct, approve), exactly as the
// headless demo does, and says what it does in a banner. The keyboard stays
// the user's: a key pressed during the demo works as in the real console
// and can no longer swallow or reorder the operator's acts. Once the task
// has ended it checks the proofs and shows them in the banner; the console
// stays open on the finished run until the user quits, or, with
// ExitWhenDone, closes itself after a moment.
type Console struct {
	s  *Scenario
	op *Operator
	// ExitWhenDone closes the console once the proofs are on screen (CI,
	// recordings).
	ExitWhenDone bool

	mu      sync.Mutex
	err     error
	outcome *Outcome
}

// NewConsole returns the console operator for this scenario.
func (s *Scenario) NewConsole() *Console {
	return &Console{s: s, op: s.NewOperator()}
}

// Operator is the operator whose decisions the console acts out.
func (c *Console) Operator() *Operator { return c.op }

// Err is the first thing the operator could not do, if any.
func (c *Console) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Outcome is the proofs checked while the console was open, if the run got
// that far.
func (c *Console) Outcome() (Outcome, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.outcome == nil {
		return Outcome{}, false
	}
	return *c.outcome, true
}

func (c *Console) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
}

// DemoTitle is the banner's first line while the demo runs: it tells the
// user the run drives itself and that their keys are theirs.
const DemoTitle = "DEMO · a scripted operator acts on its own · your keys work as usual · q quits"

// Run is the console's Script: it adds the task, answers the coordinator's
// events through the engine until the task has ended, checks the proofs
// and shows them. It returns early when ctx ends; with ExitWhenDone it
// quits the program at the end.
func (c *Console) Run(ctx context.Context, p *tea.Program) {
	notices, stop := c.s.Opened.Subscribe()
	defer stop()
	c.say(p, "operator › adding the task "+strconv.Quote(TaskTitle))
	c.s.pause(ctx)
	if _, err := c.s.AddTask(ctx); err != nil {
		c.fail(err)
		return
	}
	for !c.op.Done() {
		select {
		case n, ok := <-notices:
			if !ok {
				c.fail(fmt.Errorf("the console stopped before the task ended"))
				return
			}
			if n.Event == nil {
				continue
			}
			for _, a := range c.op.On(*n.Event) {
				if err := c.s.WaitPane(ctx, c.op.TaskID(), a.When); err != nil {
					c.fail(fmt.Errorf("the operator's %s: %w", a.Kind, err))
				}
				c.s.pause(ctx)
				c.act(ctx, p, a)
			}
		case <-ctx.Done():
			return
		}
	}
	p.Send(ui.BannerMsg{Title: "DEMO · the task has ended · checking the proofs…"})
	o := c.s.Prove(ctx, c.op, 0, c.Err())
	if ctx.Err() != nil {
		return // the user quit while the proofs ran: not an outcome
	}
	c.mu.Lock()
	c.outcome = &o
	c.mu.Unlock()
	p.Send(ProofBanner(o, c.ExitWhenDone))
	if c.ExitWhenDone {
		// Leave the outcome on screen long enough to be seen and recorded.
		c.s.linger(ctx)
		p.Quit()
	}
}

// ProofBanner is the banner that shows an outcome: the verdict, then one
// line per proof.
func ProofBanner(o Outcome, closing bool) ui.BannerMsg {
	b := ui.BannerMsg{Title: "DEMO FINISHED · every proof held", Tone: ui.ToneOK}
	if !o.OK() {
		b.Title, b.Tone = fmt.Sprintf("DEMO FAILED · %d of its checks did not hold", len(o.Failed)), ui.ToneBad
	}
	if closing {
		b.Title += " · closing"
	} else {
		b.Title += " · the run stays open to explore · q quits"
	}
	for _, pr := range o.Proofs {
		mark := "✓ "
		switch {
		case pr.Skipped:
			mark = "- "
		case pr.Err != nil:
			mark = "✗ "
		}
		b.Lines = append(b.Lines, mark+bannerClaim(pr.Claim))
	}
	return b
}

// bannerClaims say each proof's claim in a line that fits 80 columns with
// its mark: the banner cuts its lines at the width, and the whole claims
// (printed after the console closes) run to 180 characters.
var bannerClaims = map[string]string{
	ClaimContinuity: "continuity: the relaunched brief holds attempt 1's files and the correction",
	ClaimDirect:     "direct: the tests pass when the demo runs them itself on the branch",
	ClaimGate:       "gate: the console's own verify gate ran the tests last, green",
	ClaimBeats:      "beats: stuck, refused, corrected, expired, red → green, approved, in order",
	ClaimUsage:      "usage: the tokens recorded are the model server's, token for token",
}

// bannerClaim is claim as the banner shows it.
func bannerClaim(claim string) string {
	if short, ok := bannerClaims[claim]; ok {
		return short
	}
	return claim
}

// act gives one command through the engine and says so in the banner. A
// correction is shown typed out first, at a person's speed, so a recording
// shows what the operator wrote.
func (c *Console) act(ctx context.Context, p *tea.Program, a Act) {
	id := c.op.TaskID()
	switch a.Kind {
	case coord.CmdCorrect:
		typed := ""
		for _, r := range a.Text {
			typed += string(r)
			c.say(p, "operator › correct "+id.Short()+": "+typed+"▏")
			c.s.keystroke(ctx)
		}
	case coord.CmdResubmit:
		c.say(p, "operator › resubmit "+id.Short()+": the pane is stuck")
	case coord.CmdApprove:
		if c.op.inState(task.StateCompleted) {
			// The user pressed a first, as the console lets them.
			c.say(p, "operator › approve "+id.Short()+": you approved it first")
			return
		}
		c.say(p, "operator › approve "+id.Short()+": the verdict is green")
	}
	res, err := c.s.Opened.Do(ctx, a.Command(id))
	if err != nil && a.Kind == coord.CmdApprove && c.op.inState(task.StateCompleted) {
		c.say(p, "operator › approve "+id.Short()+": you approved it first")
		return
	}
	if err != nil {
		if ctx.Err() == nil {
			c.fail(fmt.Errorf("the operator's %s: %w", a.Kind, err))
		}
		return
	}
	if res.Message != "" {
		c.say(p, "operator › "+string(a.Kind)+" "+id.Short()+": "+res.Message)
	}
}

// say shows what the operator does on the banner's second line.
func (c *Console) say(p *tea.Program, line string) {
	p.Send(ui.BannerMsg{Title: DemoTitle, Lines: []string{line}})
}

// keystroke waits between two typed keys, so a recording shows typing.
func (s *Scenario) keystroke(ctx context.Context) { s.wait(ctx, s.pace.keystroke) }

// linger waits after the end, so the result stays on screen.
func (s *Scenario) linger(ctx context.Context) { s.wait(ctx, s.pace.linger) }

func (s *Scenario) wait(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

package scenario

import (
	"context"
	"fmt"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
)

// Console is the demo's operator at the console's keyboard: it presses the
// keys a person would (r, c + the correction + enter, a), so a recording
// shows the operator's input, and quits the console once the task has
// ended and the result has been on screen for a moment.
type Console struct {
	s  *Scenario
	op *Operator

	mu  sync.Mutex
	err error
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

func (c *Console) fail(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
	}
}

// Run is the console's Script: it adds the task, then answers the
// coordinator's events with key presses until the task has ended, and
// quits the program. It returns early when ctx ends.
func (c *Console) Run(ctx context.Context, p *tea.Program) {
	defer p.Quit()
	notices, stop := c.s.Opened.Subscribe()
	defer stop()
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
				c.press(ctx, p, a)
			}
		case <-ctx.Done():
			return
		}
	}
	// Leave the outcome on screen long enough to be seen and recorded.
	c.s.linger(ctx)
}

// press sends the keys of one act to the program.
func (c *Console) press(ctx context.Context, p *tea.Program, a Act) {
	switch a.Kind {
	case coord.CmdResubmit:
		p.Send(key('r'))
	case coord.CmdApprove:
		p.Send(key('a'))
	case coord.CmdCorrect:
		p.Send(key('c'))
		for _, r := range a.Text {
			c.s.keystroke(ctx)
			p.Send(key(r))
		}
		c.s.pause(ctx)
		p.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	default:
		c.fail(fmt.Errorf("the console operator has no key for %s", a.Kind))
	}
}

func key(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }

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

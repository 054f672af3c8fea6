package ui

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"
)

// stopWait bounds how long the console waits for the engine to stop every
// agent.
const stopWait = 30 * time.Second

// engineStoppedMsg carries the result of a stop.
type engineStoppedMsg struct{ err error }

// askStop asks before stopping the engine and every agent: unlike quitting,
// which only detaches this console, it ends every session.
func (m *Model) askStop() tea.Cmd {
	n := m.liveCount()
	noun := "agents"
	if n == 1 {
		noun = "agent"
	}
	stop := m.opt.StopEngine
	m.ask(fmt.Sprintf("Stop the engine and %d running %s? Their tasks requeue without losing an attempt. y/n", n, noun),
		"not stopped: the engine and its agents go on", func() tea.Cmd {
			m.setStatus("stopping the engine and every agent…", false)
			return func() tea.Msg {
				ctx, cancel := context.WithTimeout(context.Background(), stopWait)
				defer cancel()
				return engineStoppedMsg{err: stop(ctx)}
			}
		})
	return nil
}

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

// stopQuestion is what the stop key asks before stopping the engine and
// its n running agents: unlike quitting, which only detaches this console,
// it ends every session.
func stopQuestion(n int) string {
	noun := "agents"
	if n == 1 {
		noun = "agent"
	}
	return fmt.Sprintf("Stop the engine and %d running %s? Their tasks requeue without losing an attempt. y/n", n, noun)
}

// stopEngine stops the engine and every agent, off Update.
func stopEngine(stop func(ctx context.Context) error) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), stopWait)
		defer cancel()
		return engineStoppedMsg{err: stop(ctx)}
	}
}

package task

// Event kinds of the "needs you" condition: a session stopped at a dialog
// of its CLI's (an API key to approve, a folder to trust) that only the
// operator can answer. They live in a file of their own, beside the
// waiting reasons (reason_weather.go); init adds them to Kinds.
const (
	// EvSessionNeedsYou: the session shows a dialog; Text quotes it. The
	// lease is held and no attempt is charged while it waits.
	EvSessionNeedsYou Kind = "session.needs-you"
	// EvSessionAnswered: the dialog is gone; the launch's confirmation
	// continues.
	EvSessionAnswered Kind = "session.answered"
)

func init() {
	Kinds = append(Kinds, EvSessionNeedsYou, EvSessionAnswered)
}

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
	// EvSessionLimited: the session shows its provider's usage limit,
	// rate limit, overload or an expired login; Text quotes it with the
	// reset. The lease is held and no attempt is charged while it waits.
	EvSessionLimited Kind = "session.limited"
	// EvSessionLimitReset: the limit's reset came; the session goes on in
	// the same conversation ("continue" typed in).
	EvSessionLimitReset Kind = "session.limit-reset"
)

func init() {
	Kinds = append(Kinds, EvSessionNeedsYou, EvSessionAnswered, EvSessionLimited, EvSessionLimitReset)
}

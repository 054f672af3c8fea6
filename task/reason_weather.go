package task

// Reasons of the "waiting" conditions (DESIGN.md): a task held without
// blame, for a fault of the machine's or the provider's, or for the
// operator. They live in a file of their own so the list in reason.go
// stays one block; init adds them to Reasons and their sentences, so the
// tests that enumerate reasons see them like any other.
const (
	// ReasonProgramMissing: the harness's program is not installed where
	// the engine would run it; the task stays queued and no attempt is
	// counted.
	ReasonProgramMissing Reason = "program-missing"
	// ReasonProviderLimit: the agent's provider refused for now (a usage
	// or rate limit, an overload); the task waits for the reset, or moves
	// to another harness ([limits] on_limit), with no attempt counted.
	ReasonProviderLimit Reason = "provider-limit"
	// ReasonHostLost: the session host died under its agent (killed, or
	// out of memory): the machine's failure, not the task's; the phase is
	// relaunched with its continuity and the attempt is given back.
	ReasonHostLost Reason = "session-host-lost"
)

var weatherSentences = map[Reason]string{
	ReasonProgramMissing: "The agent program is not installed on this machine; the task waits, with no attempt counted, until it is.",
	ReasonProviderLimit:  "The agent's provider refused for now (a usage or rate limit); the task waits for the reset, with no attempt counted.",
	ReasonHostLost:       "The session host died under the agent; the phase is relaunched with its continuity, with no attempt counted.",
}

func init() {
	for _, r := range []Reason{ReasonProgramMissing, ReasonProviderLimit, ReasonHostLost} {
		Reasons = append(Reasons, r)
		sentences[r] = weatherSentences[r]
	}
}

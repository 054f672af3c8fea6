package task

// The reason and event of task signing (package sign): a task whose
// signature the engine cannot check runs nothing, and a task from before
// signing is signed once, at the upgrade. They live in a file of their
// own, like the waiting reasons; init adds them to Reasons and Kinds.
const (
	// ReasonBadSignature: the task's signature is missing, made with
	// another fleet key, or does not match its goal, verify command,
	// harness and pipeline (the row was edited in the store). The engine
	// launches no agent and runs no verify command of it.
	ReasonBadSignature Reason = "bad-signature"

	// EvTaskSigned: a task from before signing was signed with the fleet
	// key by the engine that created the key.
	EvTaskSigned Kind = "task.signed"
)

func init() {
	Reasons = append(Reasons, ReasonBadSignature)
	sentences[ReasonBadSignature] = "Refused: the task's signature does not check against this engine's fleet key, so nothing of it runs here (no agent, no verify command)."
	Kinds = append(Kinds, EvTaskSigned)
}

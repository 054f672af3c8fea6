// Package fork trains a base conversation for a task once and starts later
// blocks and phases as forks of it, so each reads the task's background
// from the model service's prompt cache instead of being taught again.
//
// The life of a base, for a harness that can resume a conversation
// (Claude Code: claude -p --resume ID --fork-session):
//
//	Train ──▶ base (conversation id, launch fingerprint, training cost)
//	            │
//	            ├── Fork ──▶ refused unless the fork's launch fingerprint
//	            │            equals the base's (binary, version, model,
//	            │            flags, dir, env names): a difference loses the cache
//	            ├── Fork ──▶ runs; a reply that read the cache is a hit and
//	            │            restarts the cache clock; its delta cost goes to
//	            │            the ledger
//	            └── Decide(base, policy, now) ──▶ wait | keep-warm | let-expire
//	                                              | retrain, with when and why
//
// Observed with Claude Code 2.1.332 against demo/modelstub, offline:
//
//   - claude -p --output-format json "<brief>" prints a result whose
//     session_id names the conversation; its transcript is
//     <config dir>/projects/<encoded dir>/<session_id>.jsonl.
//   - claude -p --resume ID --fork-session "<prompt>" reads that transcript
//     from the same config directory, sends the base's turns (brief and
//     reply) ahead of the new prompt, and answers under a new session_id.
//     The base's transcript is left as it was, so every fork starts from the
//     same prefix.
//   - The fork's transcript begins with a copy of the base's lines,
//     usage records included (same message ids), so a fork's own usage is
//     its transcript's records minus the base's message ids.
//   - With a config directory that lacks the transcript (another HOME) the
//     CLI exits 1 with "No conversation found with session ID: ID".
//   - From another working directory with the same HOME the CLI still finds
//     the conversation, but adds an "Environment update" system message
//     naming the new directory: the prefix changes, which is one more reason
//     the working directory is part of the fingerprint a fork must match.
//   - A prompt as the last argument after --allowedTools is taken for a
//     tool name; the prompt is given on stdin instead, which works for
//     --resume as well.
//   - The result's usage and modelUsage count the fork's own requests only,
//     but its total_cost_usd includes the base's cost (the CLI carries the
//     conversation's cost state over), so it is not a per-fork figure.
package fork

// Package modelstub is a scripted model server: an HTTP server that speaks
// enough of the Anthropic Messages API (/v1/messages, Claude Code), the
// OpenAI Responses API (/v1/responses, Codex), the OpenAI Chat Completions
// API (/v1/chat/completions, opencode) and Gemini's generateContent and
// streamGenerateContent (/v1beta/models/..., Gemini CLI) for each real CLI
// to run against it offline. Every API's request is flattened into one
// Request, so one script answers them all; a script speaks in Claude
// Code's tools (Write, Read, Edit, Bash), and for a CLI that offers only a
// shell tool each call is played as the equivalent shell command. Replies come from rules keyed on what a request
// contains (the phase heading of a brief, the tool results that came back),
// so a run is deterministic, and every request is recorded so a test can
// assert what the CLI sent.
//
// A session against the stub looks like this:
//
//	srv := modelstub.New(modelstub.PhaseScript(modelstub.ScriptOptions{}))
//	base, _ := srv.Start()                 // http://127.0.0.1:PORT
//	modelstub.SeedHome(home, workdir)      // onboarding done, workdir trusted
//	cmd.Env = modelstub.ClaudeEnv(home, base)
//	// claude --allowedTools Bash Edit Write ...
//
//	brief (user) ─▶ stub: Write artifact ─▶ CLI runs it, sends tool_result
//	             ─▶ stub: Write sentinel ─▶ CLI runs it, sends tool_result
//	             ─▶ stub: text, stop_reason end_turn
//
// Side requests the CLI makes on its own (title and topic detection, quota
// probes on the small model) carry no tools; they get a short text reply and
// do not advance the script.
package modelstub

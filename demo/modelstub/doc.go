// Package modelstub is a scripted model server: an HTTP server that speaks
// enough of the Anthropic Messages API for the real Claude Code CLI to run
// against it offline. Replies come from rules keyed on what a request
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

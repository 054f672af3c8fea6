package modelstub

import (
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// ScriptOptions shapes PhaseScript. The zero value writes each phase's
// example artifact and runs the brief's verify command where the phase
// calls for it.
type ScriptOptions struct {
	// Artifacts overrides the artifact written for a phase; the default is
	// task.Example(phase).
	Artifacts map[task.Phase]string
	// Code is the work of the implement phase, one tool call a turn, before
	// the verify command runs. Paths may be worktree-relative. The CLI
	// refuses an Edit of a file it has not Read in the session, so put a
	// Read first (see EditFile).
	Code []ToolUse
	// Verify overrides the brief's verify command. The brief's is used
	// when this is empty; with neither, no command runs.
	Verify string
	// Model and Usage, when set, are reported on every scripted reply, so a
	// test can check the CLI's accounting against known figures.
	Model string
	Usage Usage
}

// PhaseScript returns one rule per phase. A rule matches a main-loop
// request (one that offers the Write tool or a shell tool) whose latest brief names its
// phase, and plays the phase's turns in order, one per request: the
// number of assistant turns since the brief says which turn is next, so
// the script advances exactly when the CLI sends the tool results back.
//
//	frame, research, plan: Write artifact → Write sentinel → text, end_turn
//	implement:             Code... → Bash verify → Write artifact → Write sentinel → text
//	review:                Bash verify → Write artifact → Write sentinel → text
//
// Paths come from the brief's Artifact and Sentinel lines (falling back to
// task.ArtifactPath and task.SentinelPath) and are made absolute against
// the working directory the CLI reports.
func PhaseScript(opts ScriptOptions) []Rule {
	var rules []Rule
	for _, p := range task.Phases {
		rules = append(rules, Rule{
			Name: "phase " + string(p),
			When: func(req Request) bool {
				if !req.IsMainLoop() {
					return false
				}
				b, ok := FindBrief(req)
				return ok && b.Phase == p
			},
			Reply: func(req Request) Reply {
				b, _ := FindBrief(req)
				turns := phaseTurns(opts, b, req.WorkingDir())
				done := 0
				for _, m := range req.Messages[b.Index+1:] {
					if m.Role == "assistant" {
						done++
					}
				}
				reply := Reply{Text: fmt.Sprintf("Phase %s is done: %s is written and %s marks the end.", b.Phase, b.Artifact, b.Sentinel), StopReason: "end_turn"}
				if done < len(turns) {
					reply = turns[done]
				}
				reply.Model, reply.Usage = opts.Model, opts.Usage
				return reply
			},
		})
	}
	return rules
}

// phaseTurns lists the tool-calling turns of phase b.Phase.
func phaseTurns(opts ScriptOptions, b Brief, dir string) []Reply {
	if b.Artifact == "" {
		b.Artifact = task.ArtifactPath(b.Phase)
	}
	if b.Sentinel == "" {
		b.Sentinel = task.SentinelPath
	}
	artifact, ok := opts.Artifacts[b.Phase]
	if !ok {
		artifact = task.Example(b.Phase)
	}
	verify := opts.Verify
	if verify == "" {
		verify = b.Verify
	}
	var turns []Reply
	if b.Phase == task.PhaseImplement {
		for _, tu := range opts.Code {
			turns = append(turns, Reply{ToolUses: []ToolUse{resolveTool(tu, dir)}})
		}
	}
	if verify != "" && (b.Phase == task.PhaseImplement || b.Phase == task.PhaseReview) {
		turns = append(turns, Reply{Text: "Running the verify command.", ToolUses: []ToolUse{Bash(verify, "Run the verify command")}})
	}
	turns = append(turns,
		Reply{Text: "Writing the " + string(b.Phase) + " artifact.", ToolUses: []ToolUse{resolveTool(Write(b.Artifact, artifact+"\n"), dir)}},
		Reply{Text: "Marking the phase finished.", ToolUses: []ToolUse{resolveTool(Write(b.Sentinel, string(b.Phase)+"\n"), dir)}},
	)
	return turns
}

// resolveTool makes the file_path of a file tool call absolute against dir.
func resolveTool(tu ToolUse, dir string) ToolUse {
	p, ok := tu.Input["file_path"].(string)
	if !ok {
		return tu
	}
	in := make(map[string]any, len(tu.Input))
	for k, v := range tu.Input {
		in[k] = v
	}
	in["file_path"] = resolve(dir, p)
	return ToolUse{Name: tu.Name, Input: in}
}

// Write is a Write tool call creating or replacing path with content.
func Write(path, content string) ToolUse {
	return ToolUse{Name: "Write", Input: map[string]any{"file_path": path, "content": content}}
}

// Read is a Read tool call of path.
func Read(path string) ToolUse {
	return ToolUse{Name: "Read", Input: map[string]any{"file_path": path}}
}

// Edit is an Edit tool call replacing old with new in path (old must occur
// exactly once).
func Edit(path, old, new string) ToolUse {
	return ToolUse{Name: "Edit", Input: map[string]any{"file_path": path, "old_string": old, "new_string": new}}
}

// EditFile is the pair of calls the CLI needs to edit a file: Read, then
// Edit.
func EditFile(path, old, new string) []ToolUse {
	return []ToolUse{Read(path), Edit(path, old, new)}
}

// Bash is a Bash tool call running command.
func Bash(command, description string) ToolUse {
	return ToolUse{Name: "Bash", Input: map[string]any{"command": command, "description": description}}
}

package scenario

import (
	"path/filepath"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	project "github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// claudeRules is the model stub's part of the scenario (see claude.go for
// the beats). The scenario's own rules come first; the stub's phase script
// plays everything else. Every rule decides from the request alone (the
// brief's phase and attempt, what the user said after it, how many turns
// the assistant took since), so the same conversation always gets the same
// reply.
func (s *Scenario) claudeRules() []modelstub.Rule {
	fix := project.CalcFixed
	if s.opts.Break == BreakFix {
		fix = project.CalcHalf
	}
	rules := []modelstub.Rule{
		{
			Name: "research: the first brief is left unanswered",
			When: onBrief(func(req modelstub.Request, b modelstub.Brief) bool {
				return b.Phase == task.PhaseResearch && b.Attempt <= 1 && briefCount(req, task.PhaseResearch) == 1
			}),
			Reply: func(modelstub.Request) modelstub.Reply {
				return modelstub.Reply{Text: "I have read the brief."}
			},
		},
		{
			Name: "plan: rewritten after the refusal",
			When: onBrief(func(req modelstub.Request, b modelstub.Brief) bool {
				return b.Phase == task.PhasePlan && saidAfter(req, b.Index, task.RefusalPrefix) >= 0
			}),
			Reply: func(req modelstub.Request) modelstub.Reply {
				b, _ := modelstub.FindBrief(req)
				from := saidAfter(req, b.Index, task.RefusalPrefix)
				return play(req, from, "The plan is fixed and the phase marked finished again.",
					modelstub.Reply{Text: "Fixing the plan.", ToolUses: []modelstub.ToolUse{
						modelstub.Write(abs(req, artifactOf(b)), task.Example(task.PhasePlan)+"\n")}},
					modelstub.Reply{ToolUses: []modelstub.ToolUse{modelstub.Write(abs(req, sentinelOf(b)), string(task.PhasePlan)+"\n")}},
				)
			},
		},
		{
			Name: "implement attempt 1: half a fix, then a stall",
			When: onBrief(func(_ modelstub.Request, b modelstub.Brief) bool {
				return b.Phase == task.PhaseImplement && b.Attempt <= 1
			}),
			Reply: func(req modelstub.Request) modelstub.Reply {
				b, _ := modelstub.FindBrief(req)
				if saidAfter(req, b.Index, task.DecisionHeader) >= 0 {
					// The correction came: the model stops answering.
					return modelstub.Reply{Hold: true}
				}
				calc := abs(req, "calc.go")
				return play(req, b.Index, "Half of the fix is in calc.go. "+ClaudeWaiting+" before going on.",
					modelstub.Reply{Text: "Reading calc.go.", ToolUses: []modelstub.ToolUse{modelstub.Read(calc)}},
					modelstub.Reply{Text: "Fixing Add first.", ToolUses: []modelstub.ToolUse{modelstub.Write(calc, project.CalcHalf)}},
				)
			},
		},
	}
	return append(rules, modelstub.PhaseScript(modelstub.ScriptOptions{
		Artifacts: map[task.Phase]string{task.PhasePlan: agent.InvalidArtifact},
		Code:      []modelstub.ToolUse{modelstub.Read("calc.go"), modelstub.Write("calc.go", fix)},
	})...)
}

// onBrief matches a main-loop request (one offering the Write tool or a
// shell tool) that carries a brief, by ok.
func onBrief(ok func(modelstub.Request, modelstub.Brief) bool) func(modelstub.Request) bool {
	return func(req modelstub.Request) bool {
		if !req.IsMainLoop() {
			return false
		}
		b, found := modelstub.FindBrief(req)
		return found && ok(req, b)
	}
}

// briefCount is how many user messages of req carry a brief for phase p.
func briefCount(req modelstub.Request, p task.Phase) int {
	n := 0
	for _, m := range req.Messages {
		if m.Role != "user" {
			continue
		}
		if b, ok := modelstub.ParseBrief(m.Text); ok && b.Phase == p {
			n++
		}
	}
	return n
}

// saidAfter returns the index of the latest user message after from whose
// text holds marker, or -1.
func saidAfter(req modelstub.Request, from int, marker string) int {
	for i := len(req.Messages) - 1; i > from; i-- {
		if m := req.Messages[i]; m.Role == "user" && strings.Contains(m.Text, marker) {
			return i
		}
	}
	return -1
}

// play returns the next of turns: the one after as many assistant turns as
// req holds after message from, and closing text once they are all done.
func play(req modelstub.Request, from int, closing string, turns ...modelstub.Reply) modelstub.Reply {
	done := 0
	for _, m := range req.Messages[from+1:] {
		if m.Role == "assistant" {
			done++
		}
	}
	if done < len(turns) {
		return turns[done]
	}
	return modelstub.Reply{Text: closing}
}

// abs makes a worktree-relative path absolute against the directory the
// CLI says it runs in; its file tools want absolute paths.
func abs(req modelstub.Request, rel string) string {
	dir := req.WorkingDir()
	if dir == "" || filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(dir, filepath.FromSlash(rel))
}

func artifactOf(b modelstub.Brief) string {
	if b.Artifact != "" {
		return b.Artifact
	}
	return task.ArtifactPath(b.Phase)
}

func sentinelOf(b modelstub.Brief) string {
	if b.Sentinel != "" {
		return b.Sentinel
	}
	return task.SentinelPath
}

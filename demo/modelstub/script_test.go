package modelstub

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// answerScript plays req against rules the way the server does.
func answerScript(rules []Rule, req Request) (string, Reply) {
	s := New(rules)
	s.Fallback = func(Request) Reply { return Reply{Text: "side"} }
	return s.answer(req)
}

func TestPhaseScriptImplementTurns(t *testing.T) {
	t.Parallel()
	rules := PhaseScript(ScriptOptions{Code: EditFile("calc.go", "a - b", "a + b")})
	env := Message{Role: "system", Text: "# Environment\n - Primary working directory: /w/repo\n - Is a git repository: true"}
	brief := Message{Role: "user", Text: "<system-reminder>ctx</system-reminder>\n" + renderBrief(task.PhaseImplement)}
	conv := []Message{brief, env}
	tools := []string{"Bash", "Edit", "Read", "Write"}

	var got []ToolUse
	for range 6 {
		name, reply := answerScript(rules, Request{Tools: tools, Messages: conv})
		require.Equal(t, "phase implement", name)
		if len(reply.ToolUses) == 0 {
			require.Equal(t, "end_turn", reply.StopReason)
			break
		}
		got = append(got, reply.ToolUses...)
		conv = append(conv,
			Message{Role: "assistant", ToolUses: reply.ToolUses},
			Message{Role: "user", ToolResults: []ToolResult{{ToolUseID: "x", Content: "ok"}}})
	}
	require.Equal(t, []ToolUse{
		Read("/w/repo/calc.go"),
		Edit("/w/repo/calc.go", "a - b", "a + b"),
		Bash("go vet ./...", "Run the verify command"),
		Write("/w/repo/"+task.ArtifactPath(task.PhaseImplement), task.Example(task.PhaseImplement)+"\n"),
		Write("/w/repo/"+task.SentinelPath, "implement\n"),
	}, got)

	// A correction typed after the end finds the script finished: it
	// answers with text, not with the turns again.
	conv = append(conv, Message{Role: "assistant", Text: "done"}, Message{Role: "user", Text: task.DecisionHeader + " use ints"})
	_, reply := answerScript(rules, Request{Tools: tools, Messages: conv})
	require.Empty(t, reply.ToolUses)

	// Without tools (a side request) the script stays out of it.
	name, _ := answerScript(rules, Request{Messages: []Message{brief}})
	require.Equal(t, "fallback", name)
}

func TestParseBriefReadsLabelsFromPhaseSection(t *testing.T) {
	t.Parallel()
	b, ok := ParseBrief("<pasted_content id=1>" + renderBrief(task.PhaseReview) + "</pasted_content>")
	require.True(t, ok)
	require.Equal(t, Brief{Phase: task.PhaseReview, Artifact: task.ArtifactPath(task.PhaseReview),
		Sentinel: task.SentinelPath, Verify: "go vet ./...", Attempt: 1}, b)

	_, ok = ParseBrief("no brief here\n" + task.HeadingPhasePrefix + "nonsense\n")
	require.False(t, ok)
}

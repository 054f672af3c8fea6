package scenario

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	project "github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// conversation is one Claude Code session as the stub sees it: the
// working directory the CLI reports, then the user's and assistant's turns.
type conversation struct {
	rules []modelstub.Rule
	msgs  []modelstub.Message
}

const workdir = "/w/calc"

func newConversation(s *Scenario) *conversation {
	env := modelstub.Message{Role: "user", Text: "<system-reminder>\n - Primary working directory: " + workdir + "\n</system-reminder>"}
	return &conversation{rules: s.claudeRules(), msgs: []modelstub.Message{env}}
}

// say adds a user message and returns the stub's answer to it.
func (c *conversation) say(t *testing.T, text string) (string, modelstub.Reply) {
	t.Helper()
	c.msgs = append(c.msgs, modelstub.Message{Role: "user", Text: text})
	return c.answer(t)
}

// next sends the results of the last reply's tool calls back.
func (c *conversation) next(t *testing.T) (string, modelstub.Reply) {
	t.Helper()
	c.msgs = append(c.msgs, modelstub.Message{Role: "user", ToolResults: []modelstub.ToolResult{{ToolUseID: "x", Content: "ok"}}})
	return c.answer(t)
}

func (c *conversation) answer(t *testing.T) (string, modelstub.Reply) {
	t.Helper()
	req := modelstub.Request{Tools: []string{"Bash", "Edit", "Read", "Write"}, Messages: c.msgs}
	for _, r := range c.rules {
		if r.When(req) {
			reply := r.Reply(req)
			c.msgs = append(c.msgs, modelstub.Message{Role: "assistant", Text: reply.Text, ToolUses: reply.ToolUses})
			return r.Name, reply
		}
	}
	t.Fatalf("no rule answers %+v", req)
	return "", modelstub.Reply{}
}

func claudeBrief(p task.Phase, attempt int) string {
	return fmt.Sprintf("%s\nFix calc.\n\n%s\n%s %d\n%s %s\n%s %s\n%s %s\n\n%s\nNone yet.\n",
		task.HeadingGoal, task.HeadingPhase(p), task.LabelAttempt, attempt,
		task.LabelArtifact, task.ArtifactPath(p), task.LabelSentinel, task.SentinelPath,
		task.LabelVerify, project.VerifyCommand, task.HeadingPlan)
}

func at(rel string) string { return workdir + "/" + rel }

func TestClaudeRulesPlayEveryBeat(t *testing.T) {
	t.Parallel()
	s := &Scenario{}

	// Research: the first brief gets words, not work; the resubmitted
	// brief gets the phase's tool calls.
	c := newConversation(s)
	_, r := c.say(t, claudeBrief(task.PhaseResearch, 1))
	require.Empty(t, r.ToolUses)
	require.False(t, r.Hold)
	_, r = c.say(t, claudeBrief(task.PhaseResearch, 1))
	require.Equal(t, "Write", r.ToolUses[0].Name)
	require.Equal(t, at(task.ArtifactPath(task.PhaseResearch)), r.ToolUses[0].Input["file_path"])

	// Plan: an invalid plan and the sentinel; after the refusal the valid
	// plan and the sentinel again.
	c = newConversation(s)
	_, r = c.say(t, claudeBrief(task.PhasePlan, 1))
	require.Equal(t, agent.InvalidArtifact+"\n", r.ToolUses[0].Input["content"])
	_, r = c.next(t)
	require.Equal(t, at(task.SentinelPath), r.ToolUses[0].Input["file_path"])
	_, r = c.next(t)
	require.Empty(t, r.ToolUses)
	name, r := c.say(t, task.RefusalPrefix+" the plan has no steps.")
	require.Equal(t, "plan: rewritten after the refusal", name)
	require.Equal(t, modelstub.Write(at(task.ArtifactPath(task.PhasePlan)), task.Example(task.PhasePlan)+"\n"), r.ToolUses[0])
	_, r = c.next(t)
	require.Equal(t, modelstub.Write(at(task.SentinelPath), "plan\n"), r.ToolUses[0])
	_, r = c.next(t)
	require.Empty(t, r.ToolUses)

	// Implement attempt 1: half the fix, a word for the operator, and
	// after the correction a reply that never comes.
	c = newConversation(s)
	_, r = c.say(t, claudeBrief(task.PhaseImplement, 1))
	require.Equal(t, modelstub.Read(at("calc.go")), r.ToolUses[0])
	_, r = c.next(t)
	require.Equal(t, modelstub.Write(at("calc.go"), project.CalcHalf), r.ToolUses[0])
	_, r = c.next(t)
	require.Contains(t, r.Text, ClaudeWaiting)
	_, r = c.say(t, task.DecisionHeader+" "+Correction)
	require.True(t, r.Hold)

	// Implement attempt 2: the fix, the tests with Bash, the artifact and
	// the sentinel.
	c = newConversation(s)
	_, r = c.say(t, claudeBrief(task.PhaseImplement, 2))
	var calls []modelstub.ToolUse
	for len(r.ToolUses) > 0 {
		calls = append(calls, r.ToolUses...)
		_, r = c.next(t)
	}
	require.Equal(t, []modelstub.ToolUse{
		modelstub.Read(at("calc.go")),
		modelstub.Write(at("calc.go"), project.CalcFixed),
		modelstub.Bash(project.VerifyCommand, "Run the verify command"),
		modelstub.Write(at(task.ArtifactPath(task.PhaseImplement)), task.Example(task.PhaseImplement)+"\n"),
		modelstub.Write(at(task.SentinelPath), "implement\n"),
	}, calls)

	// Broken on purpose, attempt 2 writes only half the fix.
	c = newConversation(&Scenario{opts: Options{Break: BreakFix}})
	c.say(t, claudeBrief(task.PhaseImplement, 2))
	_, r = c.next(t)
	require.Equal(t, modelstub.Write(at("calc.go"), project.CalcHalf), r.ToolUses[0])
}

// The harness a demo run configures: against the stub, Claude Code's HOME
// and config directory are inside the demo directory, seeded to trust the
// task's worktree, and the stub's address is the harness's own variable;
// against the real service, the user's environment passes as the harness
// allows and no stub variable is set.
func TestClaudeHarnessKeepsToItsOwnHome(t *testing.T) {
	t.Parallel()
	s, err := Prepare(Options{Fast: true, TempDir: t.TempDir(), Harness: Claude(ClaudeOptions{Bin: "/opt/claude/bin/claude"})})
	require.NoError(t, err)
	spec := s.Opened.Config.Harness["claude"]
	require.Equal(t, "/opt/claude/bin/claude", spec.Argv[0])
	require.Equal(t, session.ResubmitBrief, spec.Resubmit)
	home := spec.SetEnv["HOME"]
	require.Equal(t, filepath.Join(s.Dir, "claude-home"), home)
	require.Equal(t, filepath.Join(home, modelstub.ConfigDirName), spec.SetEnv["CLAUDE_CONFIG_DIR"])
	require.Contains(t, spec.SetEnv["ANTHROPIC_BASE_URL"], "http://127.0.0.1:")
	seeded, err := os.ReadFile(filepath.Join(home, ".claude.json"))
	require.NoError(t, err)
	require.Contains(t, string(seeded), strconv.Quote(s.Worktree()))
	require.Equal(t, s.ID, s.NewTask().ID, "the task is added under the id the home was seeded for")
	require.NoError(t, s.Close())

	live, err := Prepare(Options{Fast: true, TempDir: t.TempDir(), Harness: Claude(ClaudeOptions{Bin: "/opt/claude/bin/claude", Real: true})})
	require.NoError(t, err)
	spec = live.Opened.Config.Harness["claude"]
	require.NotContains(t, spec.Argv, "--model", "the CLI's own default model")
	require.NotContains(t, spec.SetEnv, "HOME")
	require.NotContains(t, spec.SetEnv, "ANTHROPIC_BASE_URL")
	require.Contains(t, spec.Env, "HOME", "the user's HOME passes through the allow-list")
	require.Equal(t, 10*time.Minute, live.Opened.Config.Lease.Length.Duration)
	require.NoError(t, live.Close())
}

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/notify"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// TestUsageAddsUpWithClaude is the held-out check of usage for Claude
// Code, the pinned release and the oldest supported one, in a pane against
// the stub: the tokens the console recorded from the CLI's transcripts
// equal every token the stub served, side requests included, or the
// session's usage is marked as a lower bound (in the session.usage event
// and the snapshot, whence the console's "≥", status --json and the
// handoff).
func TestUsageAddsUpWithClaude(t *testing.T) {
	t.Parallel()
	for name, bin := range map[string]string{"pinned": "", "oldest": os.Getenv(oldestClaudeEnv)} {
		t.Run(name, func(t *testing.T) {
			parallel(t)
			if name == "oldest" && bin == "" {
				t.Skip(oldestClaudeEnv + " is not set: eval \"$(.ci/install-agents.sh)\" installs the oldest supported Claude Code")
			}
			rules := modelstub.PhaseScript(modelstub.ScriptOptions{
				Code:  modelstub.EditFile("calc.go", project.CalcBroken, project.CalcFixed),
				Model: servedModel, Usage: perReply,
			})
			b, tk := claudeSetup(t, rules, task.Task{
				Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: project.VerifyCommand,
				Harness: "claude", Model: "claude-stub-asked", Pipeline: task.Pipeline{task.PhaseImplement},
			}, os.Environ(), func(cfg *config.Config) {
				if bin != "" {
					h := cfg.Harness["claude"]
					h.Argv = append([]string{bin}, h.Argv[1:]...)
					cfg.Harness["claude"] = h
				}
			})
			last := b.waitEvent(t, tk.ID, 4*time.Minute, ended)
			require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
			recorded, lower := recordedUsage(t, b.st, tk.ID)
			served := servedTokens(b.srv)
			t.Logf("Claude Code (%s): the stub served %+v in %d replies; the console recorded %+v; lower bound: %q",
				name, served, len(b.srv.Served()), recorded, lower)
			requireAddsUp(t, served, recorded, lower)
			tv := taskView(t, b.c, tk.ID)
			require.Equal(t, lower, tv.Usage.LowerBound, "the snapshot says what the event says")
		})
	}
}

// recordedUsage sums a task's session.usage events, and says why they are a
// lower bound if one says so.
func recordedUsage(t *testing.T, st store.Store, id task.ID) (usage.Tokens, string) {
	t.Helper()
	evs, err := st.EventList(context.Background(), store.EventListParams{TaskID: id})
	require.NoError(t, err)
	var got usage.Tokens
	lower := ""
	for _, e := range evs {
		if e.Kind != task.EvUsage {
			continue
		}
		var d coord.UsageData
		require.NoError(t, json.Unmarshal(e.Data, &d))
		tk, _ := d.Totals.Sum()
		got = got.Add(tk)
		if d.LowerBound != "" {
			lower = d.LowerBound
		}
	}
	return got, lower
}

// servedTokens sums every reply the stub sent, side requests included.
func servedTokens(srv *modelstub.Server) usage.Tokens {
	var out usage.Tokens
	for _, e := range srv.Served() {
		u := e.Reply.Usage
		out = out.Add(usage.Tokens{Input: int64(u.InputTokens), Output: int64(u.OutputTokens),
			CacheCreation: int64(u.CacheCreationInputTokens), CacheRead: int64(u.CacheReadInputTokens)})
	}
	return out
}

// requireAddsUp holds recorded usage to what was served: equal, or, for a
// lower bound, no column above it.
func requireAddsUp(t *testing.T, served, recorded usage.Tokens, lower string) {
	t.Helper()
	if lower == "" {
		require.Equal(t, served, recorded, "the usage recorded is every token served, side requests included")
		return
	}
	require.LessOrEqual(t, recorded.Input, served.Input)
	require.LessOrEqual(t, recorded.Output, served.Output)
	require.LessOrEqual(t, recorded.CacheCreation, served.CacheCreation)
	require.LessOrEqual(t, recorded.CacheRead, served.CacheRead)
	require.NotZero(t, recorded.Input, "a lower bound still counts what the CLI recorded")
}

func taskView(t *testing.T, c *coord.Coordinator, id task.ID) coord.TaskView {
	t.Helper()
	for _, tv := range c.Snapshot().Tasks {
		if tv.Task.ID == id {
			return tv
		}
	}
	t.Fatalf("task %s is not in the snapshot", id)
	return coord.TaskView{}
}

// budgetReply is what each scripted reply of the budget test reports:
// $0.03275 at the stub's built-in price, so the second reply of the frame
// phase (of three) reaches a budget of $0.05, mid-phase.
var budgetReply = modelstub.Usage{InputTokens: 2000, OutputTokens: 100, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000}

// TestTaskBudgetParksAClaudeTask runs the real Claude Code against the stub
// with [budget] task = "0.05 USD" at the stub's built-in price: the task is
// parked by the reply that reaches the budget, while its session runs
// (not at a later placement), with the figures; its
// session is stopped, no attempt is charged, the notify command hears of
// it once, and the task list's reason and the verdict strip's budget show
// it.
func TestTaskBudgetParksAClaudeTask(t *testing.T) {
	parallel(t)
	notices := filepath.Join(t.TempDir(), "notices.jsonl")
	rules := modelstub.PhaseScript(modelstub.ScriptOptions{
		Code:  modelstub.EditFile("calc.go", project.CalcBroken, project.CalcFixed),
		Model: "claude-demo-stub", Usage: budgetReply,
	})
	b, tk := claudeSetup(t, rules, task.Task{
		Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: project.VerifyCommand,
		Harness: "claude", Model: "claude-stub-asked",
	}, os.Environ(), func(cfg *config.Config) {
		cfg.Budget.Task = 0.05
		cfg.Notify.Command = []string{"sh", "-c", "cat >> " + shellQuote(notices)}
	})
	parked := b.waitEvent(t, tk.ID, 4*time.Minute, func(e task.Event) bool {
		return e.Kind == task.EvTaskParked || ended(e)
	})
	require.Equal(t, task.EvTaskParked, parked.Kind, b.dump())
	require.Equal(t, task.ReasonTaskBudget, parked.Reason)
	require.NotEmpty(t, parked.SessionID, "parked while its session ran, at the end of the turn that spent the budget:\n%s", b.dump())
	var d task.BudgetData
	require.NoError(t, json.Unmarshal(parked.Data, &d))
	require.InDelta(t, 0.05, d.BudgetUSD, 1e-9)
	require.GreaterOrEqual(t, d.SpentUSD, 0.05)
	price := config.DefaultPrices()["claude-demo-stub"]
	perReplyUSD := usage.Cost(price, usage.Tokens{Input: int64(budgetReply.InputTokens), Output: int64(budgetReply.OutputTokens),
		CacheCreation: int64(budgetReply.CacheCreationInputTokens), CacheRead: int64(budgetReply.CacheReadInputTokens)})
	require.Less(t, d.SpentUSD, 0.05+perReplyUSD+1e-9, "parked by the reply that reached the budget, not later")
	t.Logf("parked: %s", parked.Text)

	exited := b.waitEvent(t, tk.ID, time.Minute, func(e task.Event) bool { return e.Kind == task.EvSessionExited })
	require.Equal(t, parked.SessionID, exited.SessionID)
	got, err := b.st.TaskGet(context.Background(), tk.ID)
	require.NoError(t, err)
	require.Equal(t, task.StateParked, got.State)
	require.Equal(t, 0, got.Attempt, "no attempt charged")
	require.True(t, strings.HasPrefix(got.Reason, "budget: "), got.Reason)
	tv := taskView(t, b.c, tk.ID)
	require.NotNil(t, b.c.Snapshot().Budget)
	require.InDelta(t, 0.05, b.c.Snapshot().Budget.TaskUSD, 1e-9)
	require.GreaterOrEqual(t, tv.Usage.CostUSD, 0.05)

	var ns []notify.Notice
	require.Eventually(t, func() bool {
		ns = readNotices(t, notices)
		return len(ns) > 0
	}, 30*time.Second, lookInterval, "the notify command ran")
	require.Len(t, ns, 1, "told once")
	require.Equal(t, notify.KindBudget, ns[0].Kind)
	require.Equal(t, tk.ID, ns[0].TaskID)
}

package ui

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/fork"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// The usage screens join the golden scenarios here, so the golden table
// stays as it was for the screens without usage.
func init() {
	scenarios = append(scenarios,
		struct {
			name  string
			fill  func(*stubEngine)
			drive func(*bundle)
		}{"usage", withUsage, func(b *bundle) { b.selectState(task.StateRunning) }},
		struct {
			name  string
			fill  func(*stubEngine)
			drive func(*bundle)
		}{"usage_events", withUsage, func(b *bundle) { b.selectState(task.StateRunning).press("4") }},
	)
}

const usageModel = "claude-stub-answered-7"

// withUsage is everyState with the running task's spending: two pane
// sessions launched alike, a trained base and a fork of it, and the base's
// cache clock in the snapshot.
func withUsage(e *stubEngine) {
	everyState(e)
	now := e.snap.At
	for i, tv := range e.snap.Tasks {
		if tv.Task.State != task.StateRunning {
			continue
		}
		tv.Usage = coord.Usage{InputTokens: 2435, OutputTokens: 708, CacheCreationTokens: 8031, CacheReadTokens: 12014,
			CostUSD: 0.0512, Models: []string{usageModel}}
		e.snap.Tasks[i] = tv
		e.snap.Bases = []coord.BaseView{{
			ID: "6f07e0a0-base-conversation", TaskID: tv.Task.ID, Model: usageModel, Launch: "7223e58de4ed", Forks: 2,
			Created: now.Add(-9 * time.Minute), LastHit: now.Add(-90 * time.Second), TrainingCostUSD: 0.0231,
			ExpiresIn: 3*time.Minute + 30*time.Second,
			Next:      fork.Decision{Action: fork.ActionKeepWarm, Due: now.Add(3 * time.Minute), Reason: "Keep warm."},
		}}
		d := e.details[tv.Task.ID]
		launch := session.Launch{Binary: "/usr/bin/claude", Hash: "aa11bb22cc33dd44"}
		d.Sessions = []store.Session{
			{ID: "01JQ8Z4SESSFIRST00", TaskID: tv.Task.ID, Phase: task.PhaseImplement, Attempt: 1, Model: "opus", Fingerprint: launch.JSON()},
			{ID: "01JQ8Z4SESSRUNNING000000", TaskID: tv.Task.ID, Phase: task.PhaseImplement, Attempt: 2, Model: "opus", Fingerprint: launch.JSON()},
		}
		// The first session ran before a price was configured.
		prices := map[string]config.Price{usageModel: {Input: 3, Output: 15, CacheCreation: 3.75, CacheRead: 0.3}}
		var first, base, forked, own usage.Totals
		first.Add(usage.Record{Model: usageModel, Tokens: usage.Tokens{Input: 1200, Output: 301, CacheCreation: 4001}}, nil)
		base.Add(usage.Record{Model: usageModel, Tokens: usage.Tokens{Input: 1201, Output: 301, CacheCreation: 4001}}, prices)
		forked.Add(usage.Record{Model: usageModel, Tokens: usage.Tokens{Input: 17, Output: 53, CacheCreation: 29, CacheRead: 6007}}, prices)
		own.Add(usage.Record{Model: usageModel, Tokens: usage.Tokens{Input: 17, Output: 53, CacheCreation: 29, CacheRead: 504}}, prices)
		ev := func(d fork.UsageData, text string, ago time.Duration) task.Event {
			data, _ := json.Marshal(d)
			return task.Event{Kind: task.EvUsage, TaskID: tv.Task.ID, SessionID: d.SessionID, Text: text, Data: data, At: now.Add(-ago)}
		}
		d.Events = append(d.Events,
			ev(fork.UsageData{SessionID: "01JQ8Z4SESSFIRST00", Phase: task.PhaseImplement, Totals: first}, "Session SFIRST00 used "+first.String()+".", 50*time.Second),
			ev(fork.UsageData{SessionID: "6f07e0a0-base-conversation", Phase: task.PhaseImplement, Totals: base, BaseID: "6f07e0a0-base-conversation", Role: fork.RoleBase}, "Base 6f07e0a0 trained.", 40*time.Second),
			ev(fork.UsageData{SessionID: "4cb90079-fork", Phase: task.PhaseImplement, Totals: forked, BaseID: "6f07e0a0-base-conversation", Role: fork.RoleFork, Hit: true,
				Delta: &fork.Delta{Own: own}}, "Fork 4cb90079 of base 6f07e0a0.", 30*time.Second))
		e.details[tv.Task.ID] = d
	}
}

// TestUsageShown checks the figures an operator reads: the task's model,
// tokens and cost beside its verdict, the base's cache clock in the lease
// strip, and per session the launch fingerprint (and its twin) and spend.
func TestUsageShown(t *testing.T) {
	t.Parallel()
	b := setup(t, withUsage).size(200, 50)
	b.selectState(task.StateRunning)
	out := ansi.Strip(b.view())
	require.Contains(t, out, "spent $0.0512 · claude-stub-answered-7 · 2.4k in 708")
	require.Contains(t, out, "base 6f07e0a0 · cache 03:30 left · last hit 1m30s ago · 2 forks · next keep-warm at")

	b.press("4")
	out = ansi.Strip(b.view())
	require.Contains(t, out, "SFIRST00 implement #1 · launch aa11bb22cc33 · no price · claude-stub-answered-7")
	require.Contains(t, out, "NG000000 implement #2 · launch aa11bb22cc33 = SFIRST00 · opus (asked)")
	require.Contains(t, out, "base 6f07e0a0 implement")
	require.Contains(t, out, "fork 4cb90079 of base 6f07e0a0 (cache hit)")
	require.True(t, strings.Contains(out, "$0.0011 beyond the"), out)
}

// TestUsageNotReported: an ended session whose agent recorded nothing the
// console reads says "usage not reported", never a zero; a live one says
// nothing yet, for its usage may come later.
func TestUsageNotReported(t *testing.T) {
	t.Parallel()
	b := setup(t, func(e *stubEngine) {
		withUsage(e)
		for _, tv := range e.snap.Tasks {
			if tv.Task.State != task.StateRunning {
				continue
			}
			d := e.details[tv.Task.ID]
			d.Sessions = append(d.Sessions, store.Session{ID: "01JQ8Z4SESSCODEXEXITED0", TaskID: tv.Task.ID,
				Phase: task.PhasePlan, Attempt: 1, Harness: "codex", EndedAt: e.snap.At.Add(-time.Minute)})
			e.details[tv.Task.ID] = d
		}
	}).size(200, 50)
	b.selectState(task.StateRunning)
	b.press("4")
	out := ansi.Strip(b.view())
	require.Contains(t, out, "XEXITED0 plan #1 · usage not reported")
	require.NotContains(t, out, "opus (asked) · usage not reported", "the live session")
	require.NotContains(t, out, "$0.0000")
}

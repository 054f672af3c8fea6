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
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// TestClaudeImplementsInAPane runs the real Claude Code CLI in a console
// pane against the scripted model server: the worker confirms the launch
// on the ❯ prompt, pastes the brief, the CLI performs the stub's tool calls
// in the task's worktree (read and edit calc.go, run the tests, write the
// artifact and the sentinel), and the console's own verify gate is green.
//
// The full pipeline runs every phase the same way, one session each.
func TestClaudeRunsTaskInAPane(t *testing.T) {
	t.Parallel()
	for name, p := range map[string]task.Pipeline{
		"implement": {task.PhaseImplement},
		"pipeline":  task.DefaultPipeline(),
	} {
		t.Run(name, func(t *testing.T) {
			parallel(t)
			runClaudeTask(t, p)
		})
	}
}

// The stub answers as servedModel, not the model the task asks for, and
// reports perReply on every scripted reply, so the usage the console
// records can be checked against known figures.
const servedModel = "claude-stub-served-1"

var (
	perReply    = modelstub.Usage{InputTokens: 1000, OutputTokens: 20, CacheCreationInputTokens: 300, CacheReadInputTokens: 4000}
	servedPrice = config.Price{Input: 3, Output: 15, CacheCreation: 3.75, CacheRead: 0.3}
)

func runClaudeTask(t *testing.T, p task.Pipeline) {
	rules := modelstub.PhaseScript(modelstub.ScriptOptions{
		Code:  modelstub.EditFile("calc.go", project.CalcBroken, project.CalcFixed),
		Model: servedModel, Usage: perReply,
	})
	b, tk := claudeSetup(t, rules, task.Task{
		Title: "Fix calc", Goal: project.Goal, Acceptance: project.Acceptance, Verify: project.VerifyCommand,
		Harness: "claude", Model: "claude-stub-asked", Pipeline: p,
	}, append(os.Environ(), "MY_SECRET_TOKEN=s3cr3t", "CLAUDECODE=1", "CLAUDE_CODE_ENTRYPOINT=cli"), func(cfg *config.Config) {
		cfg.Prices = map[string]config.Price{servedModel: servedPrice}
	})
	started := time.Now()

	last := b.waitEvent(t, tk.ID, 150*time.Second, ended)
	t.Logf("task ended after %v:\n%s", time.Since(started), b.dump())
	require.Equal(t, task.EvTaskAwaiting, last.Kind, b.dump())
	logPhaseTimings(t, b.events)

	ctx := context.Background()
	got, err := b.st.TaskGet(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, task.StateAwaitingReview, got.State)
	vs, err := b.st.VerdictList(ctx, tk.ID)
	require.NoError(t, err)
	require.NotEmpty(t, vs)
	require.Equal(t, verify.StatusOK, vs[len(vs)-1].Verdict.Status, "the console's own gate is green")
	worktree := filepath.Join(b.root, ".orchestra", "worktrees", string(tk.ID))
	code, err := os.ReadFile(filepath.Join(worktree, "calc.go"))
	require.NoError(t, err)
	require.Equal(t, project.CalcFixed, string(code))

	arts, err := b.st.ArtifactList(ctx, tk.ID)
	require.NoError(t, err)
	var sealed []task.Phase
	for _, a := range arts {
		sealed = append(sealed, a.Phase)
	}
	require.Equal(t, []task.Phase(p), sealed, "every phase's artifact is sealed, in order")

	requireFingerprints(t, b, tk.ID, len(p))
	requireUsage(t, b, tk.ID, p)

	// The first scripted request carries the pasted brief, whole and in
	// authority order.
	var first *modelstub.Exchange
	for _, e := range b.srv.Exchanges() {
		if e.Rule == "phase implement" {
			first = &e
			break
		}
	}
	require.NotNil(t, first, "the stub saw no implement request")
	br, ok := modelstub.FindBrief(first.Request)
	require.True(t, ok)
	require.Equal(t, project.VerifyCommand, br.Verify)
	requireAuthorityOrder(t, first.Request.Messages[br.Index].Text, task.PhaseImplement)
	require.Equal(t, "claude-stub-asked", first.Request.Model, "the harness passes the task's model")
}

// requireFingerprints checks that each of the task's n sessions stored its
// launch fingerprint, that it names the CLI, its version, the model and the
// flags, and the environment's names but no secret, and that sessions
// launched alike share a hash and say so.
func requireFingerprints(t *testing.T, b *bundle, id task.ID, n int) {
	t.Helper()
	ss, err := b.st.SessionList(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, ss, n)
	var hashes []string
	for _, s := range ss {
		require.NotContains(t, s.Fingerprint, "s3cr3t")
		require.NotContains(t, s.Fingerprint, modelstub.StubAPIKey)
		l, err := session.ParseLaunch(s.Fingerprint)
		require.NoError(t, err)
		require.Equal(t, b.cfg.Harness["claude"].Argv[0], l.Binary)
		require.Contains(t, l.Version, "Claude Code")
		require.Equal(t, "claude-stub-asked", l.Model)
		require.Equal(t, []string{"Bash", "Edit", "Write", "Read"}, l.AllowedTools)
		require.Equal(t, 120, l.Cols)
		require.Contains(t, l.EnvNames, "ANTHROPIC_BASE_URL")
		require.Contains(t, l.EnvNames, "ANTHROPIC_API_KEY")
		for _, name := range []string{"MY_SECRET_TOKEN", "CLAUDECODE", "CLAUDE_CODE_ENTRYPOINT"} {
			require.NotContains(t, l.EnvNames, name)
		}
		hashes = append(hashes, l.Hash)
	}
	var sameNotes int
	for _, e := range b.events {
		if e.Kind == task.EvSessionLaunched {
			require.Contains(t, e.Text, "fingerprint "+hashes[0][:12])
			if strings.Contains(e.Text, "same as session") {
				sameNotes++
			}
		}
	}
	for _, h := range hashes[1:] {
		require.Equal(t, hashes[0], h, "every phase ran in the same worktree with the same launch")
	}
	require.Equal(t, n-1, sameNotes, "each later session is shown as launched like an earlier one")
}

// requireUsage checks the usage the console read from the CLI's
// transcripts against what the stub reported: per session in the ledger,
// per phase and per task in the snapshot, under the model that answered.
func requireUsage(t *testing.T, b *bundle, id task.ID, p task.Pipeline) {
	t.Helper()
	replies := map[task.Phase]int64{}
	for _, e := range b.srv.Exchanges() {
		if ph, ok := strings.CutPrefix(e.Rule, "phase "); ok {
			replies[task.Phase(ph)]++
		}
	}
	times := func(n int64) usage.Tokens {
		return usage.Tokens{Input: n * int64(perReply.InputTokens), Output: n * int64(perReply.OutputTokens),
			CacheCreation: n * int64(perReply.CacheCreationInputTokens), CacheRead: n * int64(perReply.CacheReadInputTokens)}
	}
	evs, err := b.st.EventList(context.Background(), store.EventListParams{TaskID: id})
	require.NoError(t, err)
	var total int64
	var phases []task.Phase
	for _, e := range evs {
		if e.Kind != task.EvUsage {
			continue
		}
		var d coord.UsageData
		require.NoError(t, json.Unmarshal(e.Data, &d), e.Text)
		phases = append(phases, d.Phase)
		require.Equal(t, []string{servedModel}, d.Totals.ModelIDs(), "the model is the one that answered: %s", e.Text)
		m := d.Totals.Models[servedModel]
		require.Equal(t, times(replies[d.Phase]), m.Tokens, "phase %s: %s", d.Phase, e.Text)
		require.InDelta(t, usage.Cost(servedPrice, m.Tokens), m.CostUSD, 1e-9)
		require.Contains(t, e.Text, servedModel)
		total += replies[d.Phase]
	}
	require.Equal(t, []task.Phase(p), phases, "one usage event per session")

	var tv coord.TaskView
	for _, v := range b.c.Snapshot().Tasks {
		if v.Task.ID == id {
			tv = v
		}
	}
	u := tv.Usage
	want := times(total)
	require.Equal(t, want, usage.Tokens{Input: u.InputTokens, Output: u.OutputTokens, CacheCreation: u.CacheCreationTokens, CacheRead: u.CacheReadTokens})
	require.InDelta(t, usage.Cost(servedPrice, want), u.CostUSD, 1e-9)
	require.Equal(t, []string{servedModel}, u.Models)
	require.Len(t, u.Phases, len(p))
	for _, ph := range p {
		require.Equal(t, times(replies[ph]).Input, u.Phases[ph].InputTokens, "phase %s", ph)
	}
	require.Contains(t, tv.Models, servedModel)

	// A restarted console reads the same figures back from the ledger.
	b.stop()
	b.start(t)
	b.barrier(t)
	for _, v := range b.c.Snapshot().Tasks {
		if v.Task.ID == id {
			// The figures are the ledger's own, and so is the
			// lower-bound mark: the store keeps it with its sums.
			got := v.Usage
			require.Equal(t, u, got, "usage after a restart")
		}
	}
	t.Logf("usage: %d tokens in, %d out, $%.4f over %d replies", u.InputTokens, u.OutputTokens, u.CostUSD, total)
}

// logPhaseTimings logs, per session, how long the launch took to confirm
// (ready marker, then a quiet screen) and how long the CLI took from the
// brief to the sealed artifact.
func logPhaseTimings(t *testing.T, evs []task.Event) {
	t.Helper()
	var launched, briefed time.Time
	for _, e := range evs {
		switch e.Kind {
		case task.EvSessionLaunched:
			launched = e.At
		case task.EvSessionConfirmed:
			t.Logf("session %s: confirmed %v after launch", e.SessionID, e.At.Sub(launched).Round(time.Millisecond))
		case task.EvBriefDelivered:
			briefed = e.At
		case task.EvArtifactSealed:
			t.Logf("session %s: artifact sealed %v after the brief", e.SessionID, e.At.Sub(briefed).Round(time.Millisecond))
		}
	}
}

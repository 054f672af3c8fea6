package fork

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/demo/claudecli"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// fakeClock is the registry's clock; tests move it by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// The stub's distinctive figures: the model that answers is not the one
// asked for, and a fork reports cache reads (the base's prefix and a bit).
const (
	askedModel    = "claude-stub-asked"
	answeredModel = "claude-stub-answered-7"
	backgroundTag = "BACKGROUND-BRIEF-9F3"
)

var (
	trainUsage = modelstub.Usage{InputTokens: 1201, OutputTokens: 301, CacheCreationInputTokens: 4001}
	forkUsage  = modelstub.Usage{InputTokens: 17, OutputTokens: 53, CacheCreationInputTokens: 29, CacheReadInputTokens: 6007}
	price      = config.Price{Input: 3, Output: 15, CacheCreation: 3.75, CacheRead: 0.3}
)

type claudeBundle struct {
	srv   *modelstub.Server
	reg   *Registry
	st    store.Store
	clock *fakeClock
	run   Run
	task  task.Task
}

func setupClaude(t *testing.T) claudeBundle {
	t.Helper()
	bin := claudecli.Require(t)
	lastUser := func(r modelstub.Request) string {
		m, _ := r.LastUser()
		return m.Text
	}
	srv := modelstub.New([]modelstub.Rule{
		{Name: "fork", When: func(r modelstub.Request) bool { return strings.Contains(lastUser(r), "You are continuing") },
			Reply: func(modelstub.Request) modelstub.Reply {
				return modelstub.Reply{Text: "Block done.", Model: answeredModel, Usage: forkUsage}
			}},
		{Name: "train", When: func(r modelstub.Request) bool { return strings.Contains(lastUser(r), backgroundTag) },
			Reply: func(modelstub.Request) modelstub.Reply {
				return modelstub.Reply{Text: "Briefed; waiting for the first block.", Model: answeredModel, Usage: trainUsage}
			}},
	})
	srv.Logf = t.Logf
	baseURL, err := srv.Start()
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, srv.Close()) })

	home, work := t.TempDir(), t.TempDir()
	require.NoError(t, modelstub.SeedHome(home, work))
	st, err := sqlite.Open(filepath.Join(t.TempDir(), "orchestra.db"))
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, st.Close()) })

	t0 := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	tk := task.Task{ID: "01FORKTASK0000000000000001", Title: "fork", Goal: "g", Verify: "true", Repo: work,
		Pipeline: task.Pipeline{task.PhaseImplement}, Harness: "claude", State: task.StateQueued,
		Phase: task.PhaseImplement, CreatedAt: t0, UpdatedAt: t0}
	require.NoError(t, st.TaskInsert(t.Context(), tk))

	clock := &fakeClock{t: t0}
	cfg := config.Default()
	cfg.Prices = map[string]config.Price{answeredModel: price}
	reg := NewRegistry(st, PolicyFrom(cfg), clock.now)
	run := Run{
		Spec: session.Spec{Name: "claude-print", Env: []string{"PATH"}, SetEnv: modelstub.ClaudeSetEnv(home, baseURL),
			Argv: []string{bin, "-p", "--output-format", "json", "--model", askedModel, "--allowedTools", "Bash"}},
		Dir: work, Environ: []string{"PATH=" + os.Getenv("PATH"), "ANTHROPIC_API_KEY=sk-the-operators-own"},
		TaskID: tk.ID, Phase: task.PhaseImplement,
	}
	return claudeBundle{srv: srv, reg: reg, st: st, clock: clock, run: run, task: tk}
}

func tokensOf(u modelstub.Usage) usage.Tokens {
	return usage.Tokens{Input: int64(u.InputTokens), Output: int64(u.OutputTokens),
		CacheCreation: int64(u.CacheCreationInputTokens), CacheRead: int64(u.CacheReadInputTokens)}
}

// TestClaudeBaseAndForks runs the real Claude Code against the stub: one
// base and two forks. The recorded model and tokens are the stub's, the
// forks reuse the base's fingerprint, a fork launched differently is
// refused before it runs, and the cache clock expires and renews as the
// policy says on a fake clock.
func TestClaudeBaseAndForks(t *testing.T) {
	t.Parallel()
	b := setupClaude(t)
	ctx := t.Context()
	t0 := b.clock.now()
	var emitted []task.Event
	b.reg.OnEvent = func(ev task.Event) { emitted = append(emitted, ev) }

	base, err := b.reg.Train(ctx, b.run, "## Goal\nThe task's background. "+backgroundTag+"\nWait for blocks.")
	require.NoError(t, err)
	require.NotEmpty(t, base.ID)
	require.Equal(t, answeredModel, base.Model, "the model that answered, not the one asked for")
	require.Equal(t, askedModel, base.Launch.Model)
	require.Equal(t, []string{answeredModel}, base.Training.ModelIDs())
	require.Equal(t, tokensOf(trainUsage), base.Training.Models[answeredModel].Tokens)
	require.InDelta(t, usage.Cost(price, tokensOf(trainUsage)), base.Training.Models[answeredModel].CostUSD, 1e-12)
	require.NotContains(t, base.Launch.EnvNames, "ANTHROPIC_API_KEY_UNUSED")
	stored, err := b.reg.Get(ctx, base.ID)
	require.NoError(t, err)
	require.Equal(t, base, stored)

	// Fork 1, two minutes later: a cache hit restarts the clock.
	b.clock.set(t0.Add(2 * time.Minute))
	f1, err := b.reg.Fork(ctx, base.ID, b.run, ContinuePrompt("Block 1: write the parser."))
	require.NoError(t, err)
	requireFork(t, b, base, f1)
	require.Equal(t, t0.Add(2*time.Minute), f1.Base.LastHitAt)

	// The cache clock: warm until 2m+5m, expired at once after.
	b.clock.set(t0.Add(6 * time.Minute))
	require.NotEqual(t, ActionRetrain, b.reg.Decide(f1.Base).Action)
	require.Equal(t, t0.Add(7*time.Minute), b.reg.Decide(f1.Base).ExpiresAt)
	b.clock.set(t0.Add(7 * time.Minute))
	require.Equal(t, ActionRetrain, b.reg.Decide(f1.Base).Action)

	// Fork 2 at 6m30s, before expiry: renews it to 11m30s.
	b.clock.set(t0.Add(6*time.Minute + 30*time.Second))
	f2, err := b.reg.Fork(ctx, base.ID, b.run, ContinuePrompt("Block 2: test the parser."))
	require.NoError(t, err)
	requireFork(t, b, base, f2)
	require.NotEqual(t, f1.SessionID, f2.SessionID)
	b.clock.set(t0.Add(11 * time.Minute))
	d := b.reg.Decide(f2.Base)
	require.NotEqual(t, ActionRetrain, d.Action, d.Reason)
	require.Equal(t, t0.Add(11*time.Minute+30*time.Second), d.ExpiresAt)
	b.clock.set(t0.Add(11*time.Minute + 30*time.Second))
	require.Equal(t, ActionRetrain, b.reg.Decide(f2.Base).Action)

	got, err := b.reg.Get(ctx, base.ID)
	require.NoError(t, err)
	require.Equal(t, 2, got.Forks)
	require.Equal(t, t0.Add(6*time.Minute+30*time.Second), got.LastHitAt)

	// Both forks resent the base's conversation ahead of their prompt.
	var forks []modelstub.Exchange
	for _, e := range b.srv.Exchanges() {
		if e.Rule == "fork" {
			forks = append(forks, e)
		}
	}
	require.Len(t, forks, 2)
	for _, e := range forks {
		all := ""
		for _, m := range e.Request.Messages {
			all += m.Text + "\n"
		}
		require.Contains(t, all, backgroundTag)
		require.Contains(t, all, "Briefed; waiting for the first block.")
		require.Equal(t, askedModel, e.Request.Model)
	}

	// The ledger: one usage event for the base and one per fork.
	evs, err := b.st.EventList(ctx, store.EventListParams{TaskID: b.task.ID})
	require.NoError(t, err)
	var roles []string
	for _, ev := range evs {
		require.Equal(t, task.EvUsage, ev.Kind)
		var data UsageData
		require.NoError(t, json.Unmarshal(ev.Data, &data))
		roles = append(roles, data.Role)
		require.Equal(t, base.ID, data.BaseID)
		want := trainUsage
		if data.Role == RoleFork {
			want = forkUsage
			require.True(t, data.Hit)
			require.NotNil(t, data.Delta)
		}
		require.Equal(t, tokensOf(want), data.Totals.Models[answeredModel].Tokens, ev.Text)
		t.Log(ev.Text)
	}
	require.Equal(t, []string{RoleBase, RoleFork, RoleFork}, roles)
	// The console was handed each event as the ledger holds it.
	require.Len(t, emitted, len(evs))
	for i := range evs {
		require.Equal(t, evs[i].ID, emitted[i].ID)
		require.Equal(t, evs[i].Text, emitted[i].Text)
	}
}

// requireFork checks one fork's figures against the stub's and the base's.
func requireFork(t *testing.T, b claudeBundle, base Base, f ForkResult) {
	t.Helper()
	require.NotEqual(t, base.ID, f.SessionID, "a fork is a new conversation")
	require.Equal(t, "Block done.", f.Text)
	require.True(t, f.Hit)
	require.Equal(t, []string{answeredModel}, f.Totals.ModelIDs(), "the base's replies are not counted again")
	require.Equal(t, tokensOf(forkUsage), f.Totals.Models[answeredModel].Tokens)
	// The fork's launch is the base's, field for field.
	l, err := session.NewLaunch(t.Context(), b.run.params(), b.run.Model)
	require.NoError(t, err)
	require.Equal(t, base.Launch, l)
	// Delta: the base's prefix (1201+301+4001 tokens) read from cache is
	// the base's share; the rest of the reads and the fork's other
	// columns are the block's own.
	const prefix = 1201 + 301 + 4001
	require.EqualValues(t, prefix, f.Delta.PrefixTokens)
	own := tokensOf(forkUsage)
	own.CacheRead -= prefix
	require.Equal(t, own, f.Delta.Own.Models[answeredModel].Tokens)
	require.InDelta(t, usage.Cost(price, usage.Tokens{CacheRead: prefix}), f.Delta.PrefixCostUSD, 1e-12)
	require.InDelta(t, usage.Cost(price, own), f.Delta.Own.Models[answeredModel].CostUSD, 1e-12)
	require.InDelta(t, usage.Cost(price, tokensOf(trainUsage)), f.Delta.TrainingCostUSD, 1e-12)
}

// TestClaudeForkRefusedOnChangedLaunch checks that a fork with another
// model, or an extra allowed tool, is refused before the CLI runs, with a
// refusal event that names what differs.
func TestClaudeForkRefusedOnChangedLaunch(t *testing.T) {
	t.Parallel()
	b := setupClaude(t)
	ctx := t.Context()
	base, err := b.reg.Train(ctx, b.run, "Background. "+backgroundTag)
	require.NoError(t, err)
	before := len(b.srv.Requests())

	for _, tc := range []struct {
		name  string
		argv  []string
		field string
	}{
		{"other model", []string{"-p", "--output-format", "json", "--model", "claude-stub-other", "--allowedTools", "Bash"}, "model:"},
		{"extra tool", []string{"-p", "--output-format", "json", "--model", askedModel, "--allowedTools", "Bash", "Write"}, "allowed_tools:"},
	} {
		run := b.run
		run.Spec.Argv = append([]string{b.run.Spec.Argv[0]}, tc.argv...)
		_, err := b.reg.Fork(ctx, base.ID, run, ContinuePrompt("Block 1."))
		var ref *task.Refusal
		require.True(t, errors.As(err, &ref), "%s: %v", tc.name, err)
		require.Equal(t, task.ReasonForkFingerprint, ref.Reason)
		require.Contains(t, ref.Detail, tc.field, tc.name)
	}
	require.Len(t, b.srv.Requests(), before, "a refused fork never reaches the model")

	evs, err := b.st.EventList(ctx, store.EventListParams{TaskID: b.task.ID})
	require.NoError(t, err)
	var refusals []task.Event
	for _, ev := range evs {
		if ev.IsRefusal() {
			refusals = append(refusals, ev)
		}
	}
	require.Len(t, refusals, 2)
	require.Equal(t, task.ReasonForkFingerprint, refusals[0].Reason)
	require.Contains(t, refusals[0].Text, `model: "claude-stub-asked" (base) vs "claude-stub-other"`)
	got, err := b.reg.Get(ctx, base.ID)
	require.NoError(t, err)
	require.Zero(t, got.Forks)
}

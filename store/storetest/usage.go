package storetest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var usageCases = []testCase{
	{"UsageSumsEveryWayAnEventIsWritten", testUsageSums},
	{"UsageIgnoresUnreadableData", testUsageUnreadable},
	{"UsageRolledBackWithItsWrite", testUsageRollback},
	{"UsageKeepsTheLowerBoundMark", testUsageLowerBound},
	{"TaskSummariesLatestVerdictAndModels", testTaskSummaries},
	{"TaskStatusListLatestVerdict", testTaskStatusList},
}

// usageEvent is a session.usage event for phase p with one model's figures.
func (b *bundle) usageEvent(t *testing.T, id task.ID, p task.Phase, model string, in int64, cost float64, priced bool) task.Event {
	t.Helper()
	e := b.event(id, task.EvUsage)
	data, err := json.Marshal(store.UsageData{SessionID: "sess-1", Phase: p, Totals: task.UsageTotals{Models: map[string]task.ModelTotals{
		model: {Tokens: task.Tokens{Input: in, Output: in / 10, CacheCreation: 1, CacheRead: 2 * in}, CostUSD: cost, Priced: priced},
	}}})
	require.NoError(t, err)
	e.Data = data
	return e
}

// usageOf returns the listed totals of one task and phase.
func (b *bundle) usageOf(t *testing.T, id task.ID, p task.Phase) (task.UsageTotals, bool) {
	t.Helper()
	all, err := b.st.UsageList(b.ctx)
	require.NoError(t, err)
	for _, u := range all {
		if u.TaskID == id && u.Phase == p {
			return u.Totals, true
		}
	}
	return task.UsageTotals{}, false
}

// Usage events add up per task, phase and model whichever write carries
// them: a plain append, a task update, a task insert or an import.
func testUsageSums(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	other := b.insertTask(t)
	require.NoError(t, b.st.EventAppend(b.ctx,
		b.usageEvent(t, tk.ID, task.PhasePlan, "opus", 100, 0.5, true),
		b.usageEvent(t, tk.ID, task.PhasePlan, "opus", 50, 0.25, true),
		b.usageEvent(t, tk.ID, task.PhasePlan, "haiku", 7, 0, false),
		b.usageEvent(t, other.ID, task.PhasePlan, "opus", 1, 0.01, true)))
	next := tk
	next.UpdatedAt = b.at(time.Hour)
	require.NoError(t, b.st.TaskUpdate(b.ctx, store.TaskUpdateParams{Task: next, ExpectState: task.StateQueued,
		Events: []task.Event{b.usageEvent(t, tk.ID, task.PhaseImplement, "opus", 10, 0.125, false)}}))

	plan, ok := b.usageOf(t, tk.ID, task.PhasePlan)
	require.True(t, ok)
	require.Equal(t, map[string]task.ModelTotals{
		"opus":  {Tokens: task.Tokens{Input: 150, Output: 15, CacheCreation: 2, CacheRead: 300}, CostUSD: 0.75, Priced: true},
		"haiku": {Tokens: task.Tokens{Input: 7, Output: 0, CacheCreation: 1, CacheRead: 14}, CostUSD: 0, Priced: false},
	}, plan.Models)
	impl, ok := b.usageOf(t, tk.ID, task.PhaseImplement)
	require.True(t, ok)
	require.Equal(t, task.ModelTotals{Tokens: task.Tokens{Input: 10, Output: 1, CacheCreation: 1, CacheRead: 20}, CostUSD: 0.125}, impl.Models["opus"])

	// One unpriced addend makes the sum unpriced.
	require.NoError(t, b.st.EventAppend(b.ctx, b.usageEvent(t, other.ID, task.PhasePlan, "opus", 1, 0, false)))
	o, _ := b.usageOf(t, other.ID, task.PhasePlan)
	require.False(t, o.Models["opus"].Priced)

	// An imported history counts too.
	p := b.importParams()
	p.Events = append(p.Events, b.usageEvent(t, p.Task.ID, task.PhaseReview, "opus", 40, 0.5, true))
	require.NoError(t, b.st.TaskImport(b.ctx, p))
	imp, ok := b.usageOf(t, p.Task.ID, task.PhaseReview)
	require.True(t, ok)
	require.Equal(t, int64(40), imp.Models["opus"].Tokens.Input)

	// The list is ordered by task, then phase.
	all, err := b.st.UsageList(b.ctx)
	require.NoError(t, err)
	for i := 1; i < len(all); i++ {
		prev, cur := all[i-1], all[i]
		require.True(t, prev.TaskID < cur.TaskID || prev.TaskID == cur.TaskID && prev.Phase < cur.Phase, "%v before %v", prev, cur)
	}
}

// A phase whose sessions' usage was marked a lower bound stays marked in
// the sums, whatever events without a mark add after it; a phase with no
// marked event is not marked.
func testUsageLowerBound(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	const why = "Claude Code 2.1.197 makes a side request at each start that it records nowhere"
	marked := b.usageEvent(t, tk.ID, task.PhaseImplement, "opus", 100, 0.5, true)
	var d store.UsageData
	require.NoError(t, json.Unmarshal(marked.Data, &d))
	d.LowerBound = why
	data, err := json.Marshal(d)
	require.NoError(t, err)
	marked.Data = data
	require.NoError(t, b.st.EventAppend(b.ctx, b.usageEvent(t, tk.ID, task.PhaseImplement, "haiku", 5, 0, false), marked,
		b.usageEvent(t, tk.ID, task.PhaseImplement, "opus", 50, 0.25, true),
		b.usageEvent(t, tk.ID, task.PhaseReview, "opus", 10, 0.1, true)))
	byPhase := func() map[task.Phase]store.UsageTotal {
		all, err := b.st.UsageList(b.ctx)
		require.NoError(t, err)
		out := map[task.Phase]store.UsageTotal{}
		for _, u := range all {
			if u.TaskID == tk.ID {
				out[u.Phase] = u
			}
		}
		return out
	}
	got := byPhase()
	require.Equal(t, why, got[task.PhaseImplement].LowerBound)
	require.Equal(t, int64(150), got[task.PhaseImplement].Totals.Models["opus"].Tokens.Input)
	require.Empty(t, got[task.PhaseReview].LowerBound)
}

// A session.usage event whose data the store cannot read is kept in the
// ledger and adds nothing.
func testUsageUnreadable(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	bad := b.event(tk.ID, task.EvUsage)
	bad.Data = json.RawMessage(`{"phase": 3}`)
	none := b.event(tk.ID, task.EvUsage)
	none.Data = nil
	other := b.event(tk.ID, task.EvVerifyFinished)
	other.Data = json.RawMessage(`{"phase": "plan", "totals": {"models": {"opus": {"tokens": {"input": 5}}}}}`)
	require.NoError(t, b.st.EventAppend(b.ctx, bad, none, other))
	require.Len(t, b.events(t, tk.ID), 3)
	all, err := b.st.UsageList(b.ctx)
	require.NoError(t, err)
	require.Empty(t, all)
}

// A write that fails adds none of its events' usage.
func testUsageRollback(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	next := tk
	err := b.st.TaskUpdate(b.ctx, store.TaskUpdateParams{Task: next, ExpectState: task.StateRunning,
		Events: []task.Event{b.usageEvent(t, tk.ID, task.PhasePlan, "opus", 10, 1, true)}})
	require.Error(t, err)
	_, ok := b.usageOf(t, tk.ID, task.PhasePlan)
	require.False(t, ok)
}

// TaskSummaries lists every task once, oldest first, with its latest
// verdict and its sessions' distinct models in the order they first ran.
func testTaskSummaries(t *testing.T, b *bundle) {
	first := b.insertTask(t)
	second := b.insertTask(t)
	s1 := b.newSession(first.ID, time.Second)
	s1.Model = "sonnet"
	s2 := b.newSession(first.ID, 2*time.Second)
	s2.Model = "opus"
	s3 := b.newSession(first.ID, 3*time.Second)
	s3.Model = "sonnet"
	s4 := b.newSession(first.ID, 4*time.Second)
	s4.Model = ""
	for _, s := range []store.Session{s1, s2, s3, s4} {
		require.NoError(t, b.st.SessionInsert(b.ctx, s))
	}
	red := task.Verdict{Status: task.VerdictIncomplete, Command: "go test ./...", Passed: 1, Failed: 2, Counted: true, At: b.at(time.Minute)}
	green := task.Verdict{Status: task.VerdictOK, Command: "go test ./...", ExitCode: 0, Passed: 3, Skipped: 1, Counted: true,
		Tail: "ok  \tcalc\t0.01s\n", OutputBytes: 4096, Detail: "after a retry", Duration: 1500 * time.Millisecond,
		At: b.at(2*time.Minute + 123456789)}
	require.NoError(t, b.st.VerdictInsert(b.ctx, store.VerdictRecord{TaskID: first.ID, Phase: task.PhasePlan, Verdict: red}))
	require.NoError(t, b.st.VerdictInsert(b.ctx, store.VerdictRecord{TaskID: first.ID, Phase: task.PhasePlan, Verdict: green}))

	sums, err := b.st.TaskSummaries(b.ctx)
	require.NoError(t, err)
	require.Len(t, sums, 2)
	require.Equal(t, first, sums[0].Task)
	require.NotNil(t, sums[0].Verdict)
	got := *sums[0].Verdict
	got.Tail = "" // a driver may leave the output to VerdictList
	want := green
	want.Tail = ""
	require.Equal(t, want, got)
	require.Equal(t, []string{"sonnet", "opus"}, sums[0].Models)
	require.Equal(t, second, sums[1].Task)
	require.Nil(t, sums[1].Verdict)
	require.Empty(t, sums[1].Models)
}

// The status list is every task's state and latest verdict, in creation
// order, with what the verdict's line shows.
func testTaskStatusList(t *testing.T, b *bundle) {
	first := b.insertTask(t)
	second := b.insertTask(t)
	red := task.Verdict{Status: task.VerdictIncomplete, Command: "go test ./...", Passed: 1, Failed: 2, Counted: true, At: b.at(time.Minute)}
	broken := task.Verdict{Status: task.VerdictError, Command: "go test ./...", Detail: "timed out after 5m0s", At: b.at(2 * time.Minute)}
	require.NoError(t, b.st.VerdictInsert(b.ctx, store.VerdictRecord{TaskID: first.ID, Phase: task.PhasePlan, Verdict: red}))
	require.NoError(t, b.st.VerdictInsert(b.ctx, store.VerdictRecord{TaskID: first.ID, Phase: task.PhasePlan, Verdict: broken}))
	require.NoError(t, b.st.VerdictInsert(b.ctx, store.VerdictRecord{TaskID: second.ID, Phase: task.PhasePlan, Verdict: red}))
	third := b.insertTask(t)

	got, err := b.st.TaskStatusList(b.ctx)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for i, tk := range []task.Task{first, second, third} {
		require.Equal(t, tk.ID, got[i].ID)
		require.Equal(t, tk.Title, got[i].Title)
		require.Equal(t, tk.State, got[i].State)
		require.Equal(t, tk.Phase, got[i].Phase)
		require.Equal(t, tk.Attempt, got[i].Attempt)
		require.Equal(t, tk.Reason, got[i].Reason)
	}
	require.NotNil(t, got[0].Verdict)
	require.Equal(t, broken.Line(), got[0].Verdict.Line())
	require.NotNil(t, got[1].Verdict)
	require.Equal(t, red.Line(), got[1].Verdict.Line())
	require.Nil(t, got[2].Verdict)
}

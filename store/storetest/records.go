package storetest

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var recordCases = []testCase{
	{"DecisionInsertList", testDecisions},
	{"CommentAnchorAndResolve", testComments},
	{"DeliveryInsertOnce", testDeliveries},
	{"DecisionDeliverOneWrite", testDecisionDeliver},
	{"SessionInsertUpdateGetList", testSessions},
	{"SessionMissing", testSessionMissing},
	{"SessionListLiveAcrossTasks", testSessionListLive},
	{"ArtifactSealFencedByToken", testArtifactSeal},
	{"VerdictRoundTrip", testVerdicts},
	{"DeadEndRoundTrip", testDeadEnds},
}

func (b *bundle) newDecision(taskID task.ID, after time.Duration) store.Decision {
	return store.Decision{ID: b.id("dec"), TaskID: taskID, Text: "use the v2 API", Author: "ops", At: b.at(after)}
}

func (b *bundle) newSession(taskID task.ID, after time.Duration) store.Session {
	return store.Session{
		ID: b.id("sess"), TaskID: taskID, Phase: task.PhasePlan, Attempt: 1, Harness: "claude", Model: "opus",
		Token: 1, Holder: "slot-1@host", Status: store.SessionLaunching, Brief: "# Brief\nDo it.",
		StartedAt: b.at(after),
	}
}

func testDecisions(t *testing.T, b *bundle) {
	tk, other := b.insertTask(t), b.insertTask(t)
	d1, d2 := b.newDecision(tk.ID, 2*time.Second), b.newDecision(tk.ID, 3*time.Second)
	ev := b.event(tk.ID, task.EvDecisionRecorded)
	require.NoError(t, b.st.DecisionInsert(b.ctx, d1, ev))
	require.NoError(t, b.st.DecisionInsert(b.ctx, d2))
	require.NoError(t, b.st.DecisionInsert(b.ctx, b.newDecision(other.ID, time.Second)))

	got, err := b.st.DecisionList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.Decision{d1, d2}, got)
	b.requireEvents(t, tk.ID, ev)

	none, err := b.st.DecisionList(b.ctx, "nope")
	require.NoError(t, err)
	require.Empty(t, none)
}

func testDeliveries(t *testing.T, b *bundle) {
	tk, other := b.insertTask(t), b.insertTask(t)
	d := b.newDecision(tk.ID, time.Second)
	require.NoError(t, b.st.DecisionInsert(b.ctx, d))
	s1, s2 := b.newSession(tk.ID, time.Second), b.newSession(tk.ID, 2*time.Second)
	require.NoError(t, b.st.SessionInsert(b.ctx, s1))
	require.NoError(t, b.st.SessionInsert(b.ctx, s2))
	od := b.newDecision(other.ID, time.Second)
	require.NoError(t, b.st.DecisionInsert(b.ctx, od))
	otherSess := b.newSession(other.ID, time.Second)
	require.NoError(t, b.st.SessionInsert(b.ctx, otherSess))

	first := store.Delivery{DecisionID: d.ID, SessionID: s1.ID, At: b.at(5 * time.Second)}
	ev := b.event(tk.ID, task.EvDecisionDelivered)
	ok, err := b.st.DeliveryInsert(b.ctx, first, ev)
	require.NoError(t, err)
	require.True(t, ok)

	// The same decision to the same session again: nothing is written, not
	// even the events, so a retry cannot double the ledger.
	again := first
	again.At = b.at(9 * time.Second)
	ok, err = b.st.DeliveryInsert(b.ctx, again, b.event(tk.ID, task.EvDecisionDelivered))
	require.NoError(t, err)
	require.False(t, ok)

	second := store.Delivery{DecisionID: d.ID, SessionID: s2.ID, At: b.at(6 * time.Second)}
	ok, err = b.st.DeliveryInsert(b.ctx, second)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = b.st.DeliveryInsert(b.ctx, store.Delivery{DecisionID: od.ID, SessionID: otherSess.ID, At: b.now})
	require.NoError(t, err)
	require.True(t, ok)

	got, err := b.st.DeliveryList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.Delivery{first, second}, got)
	b.requireEvents(t, tk.ID, ev)
}

// A decision and its delivery are recorded together with their events, in
// order; when any part fails (a session the store does not know) none of
// it is, the decision included.
func testDecisionDeliver(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	s1 := b.newSession(tk.ID, time.Second)
	require.NoError(t, b.st.SessionInsert(b.ctx, s1))

	d := b.newDecision(tk.ID, time.Second)
	dl := store.Delivery{DecisionID: d.ID, SessionID: s1.ID, At: b.at(2 * time.Second)}
	rec, del := b.event(tk.ID, task.EvDecisionRecorded), b.event(tk.ID, task.EvDecisionDelivered)
	require.NoError(t, b.st.DecisionDeliver(b.ctx, d, dl, rec, del))

	lost := b.newDecision(tk.ID, 3*time.Second)
	require.Error(t, b.st.DecisionDeliver(b.ctx, lost, store.Delivery{DecisionID: lost.ID, SessionID: "no-such-session", At: b.at(4 * time.Second)},
		b.event(tk.ID, task.EvDecisionRecorded), b.event(tk.ID, task.EvDecisionDelivered)))

	decisions, err := b.st.DecisionList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.Decision{d}, decisions)
	deliveries, err := b.st.DeliveryList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.Delivery{dl}, deliveries)
	b.requireEvents(t, tk.ID, rec, del)
	// Delivered once: the same delivery again writes nothing.
	ok, err := b.st.DeliveryInsert(b.ctx, dl)
	require.NoError(t, err)
	require.False(t, ok)
}

func testSessions(t *testing.T, b *bundle) {
	tk, other := b.insertTask(t), b.insertTask(t)
	s1 := b.newSession(tk.ID, time.Second)
	s2 := b.newSession(tk.ID, 2*time.Second)
	ev := b.event(tk.ID, task.EvSessionLaunched)
	require.NoError(t, b.st.SessionInsert(b.ctx, s1, ev))
	require.NoError(t, b.st.SessionInsert(b.ctx, s2))
	require.NoError(t, b.st.SessionInsert(b.ctx, b.newSession(other.ID, time.Second)))
	require.Error(t, b.st.SessionInsert(b.ctx, s1, b.event(tk.ID, task.EvSessionLaunched)), "duplicate id")

	got, err := b.st.SessionGet(b.ctx, s1.ID)
	require.NoError(t, err)
	require.Equal(t, s1, got)

	s1.Status, s1.ExitCode, s1.CastPath = store.SessionExited, 3, ".orchestra/casts/s1.cast"
	s1.Fingerprint, s1.Continuity, s1.EndedAt = "fp", "left off at step 2", b.at(time.Minute)
	exited := b.event(tk.ID, task.EvSessionExited)
	require.NoError(t, b.st.SessionUpdate(b.ctx, s1, exited))
	got, err = b.st.SessionGet(b.ctx, s1.ID)
	require.NoError(t, err)
	require.Equal(t, s1, got)

	list, err := b.st.SessionList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.Session{s1, s2}, list)
	b.requireEvents(t, tk.ID, ev, exited)
}

// The live list holds the launching and confirmed sessions of every task,
// in launch order, and loses a session as soon as it ends.
func testSessionListLive(t *testing.T, b *bundle) {
	tk, other := b.insertTask(t), b.insertTask(t)
	launching := b.newSession(other.ID, 3*time.Second)
	confirmed := b.newSession(tk.ID, 2*time.Second)
	confirmed.Status = store.SessionConfirmed
	exited := b.newSession(tk.ID, time.Second)
	exited.Status, exited.EndedAt = store.SessionExited, b.at(time.Minute)
	killed := b.newSession(other.ID, time.Second)
	killed.Status, killed.EndedAt = store.SessionKilled, b.at(time.Minute)
	for _, s := range []store.Session{launching, confirmed, exited, killed} {
		require.NoError(t, b.st.SessionInsert(b.ctx, s))
	}
	live, err := b.st.SessionListLive(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []store.Session{confirmed, launching}, live)

	confirmed.Status, confirmed.EndedAt = store.SessionKilled, b.at(2*time.Minute)
	require.NoError(t, b.st.SessionUpdate(b.ctx, confirmed))
	live, err = b.st.SessionListLive(b.ctx)
	require.NoError(t, err)
	require.Equal(t, []store.Session{launching}, live)
}

func testSessionMissing(t *testing.T, b *bundle) {
	_, err := b.st.SessionGet(b.ctx, "nope")
	require.ErrorIs(t, err, store.ErrNotFound)
	tk := b.insertTask(t)
	s := b.newSession(tk.ID, 0)
	require.ErrorIs(t, b.st.SessionUpdate(b.ctx, s, b.event(tk.ID, task.EvSessionExited)), store.ErrNotFound)
	b.requireEvents(t, tk.ID)
}

func testArtifactSeal(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	_, err := b.st.ArtifactSeal(b.ctx, store.ArtifactSealParams{
		TaskID: tk.ID, Token: 0, Phase: task.PhasePlan, Content: []byte("x"), At: b.now,
	})
	require.ErrorIs(t, err, store.ErrStaleToken, "token 0 is never current: a task must be leased to seal")
	l, err := b.st.LeaseGrant(b.ctx, store.LeaseGrantParams{
		TaskID: tk.ID, Holder: "slot-1", ExpectState: task.StateQueued, GrantedAt: b.now, Deadline: b.at(time.Minute),
	})
	require.NoError(t, err)

	content := []byte("# Plan\n1. do it\n")
	sum := sha256.Sum256(content)
	ev := b.event(tk.ID, task.EvArtifactSealed)
	a, err := b.st.ArtifactSeal(b.ctx, store.ArtifactSealParams{
		TaskID: tk.ID, Token: l.Token, Phase: task.PhasePlan, Content: content, SessionID: "sess-1",
		At: b.at(time.Second), Events: []task.Event{ev},
	})
	require.NoError(t, err)
	want := store.Artifact{TaskID: tk.ID, Phase: task.PhasePlan, Content: content,
		SHA256: hex.EncodeToString(sum[:]), Session: "sess-1", At: b.at(time.Second)}
	require.Equal(t, want, a)

	// A newer grant (after a requeue) makes the first token stale: the old
	// session's seal is refused and leaves no trace.
	b.requeue(t, tk.ID)
	_, err = b.st.LeaseGrant(b.ctx, store.LeaseGrantParams{
		TaskID: tk.ID, Holder: "slot-2", ExpectState: task.StateQueued, GrantedAt: b.at(time.Minute), Deadline: b.at(2 * time.Minute),
	})
	require.NoError(t, err)
	_, err = b.st.ArtifactSeal(b.ctx, store.ArtifactSealParams{
		TaskID: tk.ID, Token: l.Token, Phase: task.PhaseImplement, Content: []byte("late"), SessionID: "sess-1",
		At: b.at(2 * time.Minute), Events: []task.Event{b.event(tk.ID, task.EvArtifactSealed)},
	})
	require.ErrorIs(t, err, store.ErrStaleToken)

	list, err := b.st.ArtifactList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.Artifact{want}, list)
	b.requireEvents(t, tk.ID, ev)

	_, err = b.st.ArtifactSeal(b.ctx, store.ArtifactSealParams{TaskID: "nope", Token: 1, Phase: task.PhasePlan, Content: content})
	require.Error(t, err)
}

func testVerdicts(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	v1 := store.VerdictRecord{TaskID: tk.ID, SessionID: "sess-1", Phase: task.PhaseImplement, Verdict: task.Verdict{
		Status: task.VerdictIncomplete, Command: "go test ./...", ExitCode: 1, Passed: 40, Failed: 2, Skipped: 3,
		Counted: true, Tail: "--- FAIL: TestX\nFAIL", Detail: "2 tests failed", Duration: 1234567 * time.Microsecond,
		At: b.at(time.Minute),
	}}
	v2 := store.VerdictRecord{TaskID: tk.ID, Phase: task.PhaseReview, Verdict: task.Verdict{
		Status: task.VerdictOK, Command: "go test ./...", Passed: 42, Counted: true, Tail: "ok", Duration: time.Second,
		At: b.at(2 * time.Minute),
	}}
	ev := b.event(tk.ID, task.EvVerifyFinished)
	require.NoError(t, b.st.VerdictInsert(b.ctx, v1, ev))
	require.NoError(t, b.st.VerdictInsert(b.ctx, v2))

	got, err := b.st.VerdictList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.VerdictRecord{v1, v2}, got)
	b.requireEvents(t, tk.ID, ev)
}

func testDeadEnds(t *testing.T, b *bundle) {
	tk := b.insertTask(t)
	d1 := store.DeadEnd{TaskID: tk.ID, Phase: task.PhaseImplement, Attempt: 1, Text: "patching vendor/ broke the build", At: b.at(time.Minute)}
	d2 := store.DeadEnd{TaskID: tk.ID, Phase: task.PhaseImplement, Attempt: 2, Text: "retry loop hid the race", At: b.at(2 * time.Minute)}
	ev := b.event(tk.ID, task.EvDeadEnd)
	require.NoError(t, b.st.DeadEndInsert(b.ctx, d1, ev))
	require.NoError(t, b.st.DeadEndInsert(b.ctx, d2))

	got, err := b.st.DeadEndList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.DeadEnd{d1, d2}, got)
	b.requireEvents(t, tk.ID, ev)
}

// progress returns a lease progress sample with every field set.
func (b *bundle) progress(after time.Duration) lease.Progress {
	return lease.Progress{Screen: "scr", Worktree: "wt", Artifacts: 1, At: b.at(after)}
}

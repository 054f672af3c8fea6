package coord

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/forge/github"
	"github.com/orchestra-tui/orchestra-tui/forge/github/githubstub"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// askedForge records the since of every read of an issue's comments.
type askedForge struct {
	forge.Forge
	mu    sync.Mutex
	asked []time.Time
}

func (f *askedForge) Comments(ctx context.Context, n int, since time.Time) ([]forge.Comment, error) {
	f.mu.Lock()
	f.asked = append(f.asked, since)
	f.mu.Unlock()
	return f.Forge.Comments(ctx, n, since)
}

func (f *askedForge) first() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.asked) == 0 {
		return time.Time{}
	}
	return f.asked[0]
}

// cursorStore is a store whose cursor writes fail while broken: an engine
// that dies after recording a poll's decisions and before its cursor.
type cursorStore struct {
	store.Store
	broken atomic.Bool
}

func (s *cursorStore) CursorPut(ctx context.Context, c store.Cursor) error {
	if s.broken.Load() {
		return errors.New("killed before the cursor was written")
	}
	return s.Store.CursorPut(ctx, c)
}

// A source started again (an engine restarted: no memory, the same store)
// asks the forge for the comments since the cursor the first one stored,
// not since the zero time; across the restart no comment reaches the live
// agent twice and none is lost, also when the first died after recording
// a comment and before moving its cursor; the restarted source edits the
// status comment the first posted rather than posting a second.
func TestARestartedSourceReadsFromTheStoredCursor(t *testing.T) {
	t.Parallel()
	cs := &cursorStore{}
	b := setupWrapped(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst}},
	}}, nil, func(st store.Store) store.Store { cs.Store = st; return cs })
	gh, f := githubRepo(t, "ghp_cursor_test_token")
	// Every stamp ten seconds after the last: each comment moves the
	// cursor (GitHub's times are whole seconds).
	var clock atomic.Int64
	clock.Store(time.Now().Add(-time.Hour).Unix())
	gh.SetClock(func() time.Time { return time.Unix(clock.Add(10), 0) })
	n := gh.AddIssue("alice", "Fix calc", project.Goal+"\n\n```verify\n"+project.VerifyCommand+"\n```\n",
		"orchestra", "harness:scripted", "pipeline:implement")
	cfg := SourceConfig{Forge: f, Key: "github team/app", Label: "orchestra", Verify: project.VerifyCommand}
	ctx := context.Background()

	first := NewSource(b.c, cfg)
	require.NoError(t, first.Poll(ctx))
	id := IssueTaskID(cfg.Key, n)
	b.waitEvent(t, 60*time.Second, kindIs(task.EvBriefDelivered))
	received := func(text string) int {
		k := 0
		for _, r := range b.inputsOf(t, agent.InputDecision) {
			if strings.Contains(r.Text, text) {
				k++
			}
		}
		return k
	}
	gh.AddComment(n, "alice", "cursor-probe-a")
	gh.AddComment(n, "alice", "cursor-probe-b")
	require.NoError(t, first.Poll(ctx))
	b.waitRecord(t, 30*time.Second, "a and b", func() bool { return received("cursor-probe-b") > 0 })
	cur, err := b.st.CursorGet(ctx, cfg.Key, commentsCursor(n))
	require.NoError(t, err)
	require.False(t, cur.Since.IsZero(), "the cursor is stored")
	require.NotZero(t, cur.Ref, "with the status comment")

	// c is recorded, then the engine dies before its cursor moves.
	gh.AddComment(n, "alice", "cursor-probe-c")
	cs.broken.Store(true)
	require.ErrorContains(t, first.Poll(ctx), "killed before the cursor was written")
	cs.broken.Store(false)
	b.waitRecord(t, 30*time.Second, "c", func() bool { return received("cursor-probe-c") > 0 })
	stale, err := b.st.CursorGet(ctx, cfg.Key, commentsCursor(n))
	require.NoError(t, err)
	require.Equal(t, cur.Since, stale.Since, "the cursor did not move")
	// d comes while no engine runs.
	gh.AddComment(n, "alice", "cursor-probe-d")

	asked := &askedForge{Forge: f}
	again := NewSource(b.c, SourceConfig{Forge: asked, Key: cfg.Key, Label: cfg.Label, Verify: cfg.Verify})
	require.NoError(t, again.Poll(ctx))
	require.Equal(t, cur.Since, asked.first(), "the restarted source asks from the stored cursor")
	require.NoError(t, again.Poll(ctx))
	b.waitRecord(t, 30*time.Second, "d", func() bool { return received("cursor-probe-d") > 0 })
	moved, err := b.st.CursorGet(ctx, cfg.Key, commentsCursor(n))
	require.NoError(t, err)
	require.True(t, moved.Since.After(cur.Since), "the restarted source moves it on")

	ds, err := b.st.DecisionList(ctx, id)
	require.NoError(t, err)
	require.Len(t, ds, 4, "one decision per comment")
	for _, text := range []string{"cursor-probe-a", "cursor-probe-b", "cursor-probe-c", "cursor-probe-d"} {
		require.Equal(t, 1, received(text), "%s reached the agent once", text)
	}
	statuses := 0
	all, err := f.Comments(ctx, n, time.Time{})
	require.NoError(t, err)
	for _, c := range all {
		if strings.Contains(c.Body, StatusMarker) {
			statuses++
			require.Equal(t, cur.Ref, c.ID, "the stored status comment")
		}
	}
	require.Equal(t, 1, statuses, "one status comment across the restart")
}

// nextSince stops a second before the newest handled comment, never past
// one that was not handled, and never goes back.
func TestNextSince(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC) }
	list := []forge.Comment{{Created: at(10)}, {Created: at(12), Updated: at(30)}, {Created: at(20)}}
	require.Equal(t, at(29), nextSince(at(0), list, 3))
	require.Equal(t, at(19), nextSince(at(0), list, 2), "the third, older than the second's edit, is read again")
	require.Equal(t, at(0), nextSince(at(0), list, 0), "none handled")
	require.Equal(t, at(15), nextSince(at(15), list, 0), "never back")
	require.Equal(t, at(15), nextSince(at(15), nil, 0))
}

// A status comment someone deleted on the forge is posted anew at the
// next change, and its new id is the one the cursor keeps: before, every
// poll failed on editing the deleted one.
func TestADeletedStatusCommentIsPostedAgain(t *testing.T) {
	t.Parallel()
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst}},
	}}, nil)
	gh, f := githubRepo(t, "ghp_deleted_status_token")
	n := gh.AddIssue("alice", "Fix calc", project.Goal+"\n\n```verify\n"+project.VerifyCommand+"\n```\n",
		"orchestra", "harness:scripted", "pipeline:implement")
	cfg := SourceConfig{Forge: f, Key: "github team/app", Label: "orchestra", Verify: project.VerifyCommand}
	ctx := context.Background()
	src := NewSource(b.c, cfg)
	require.NoError(t, src.Poll(ctx))
	statusComments := func() []forge.Comment {
		all, err := f.Comments(ctx, n, time.Time{})
		require.NoError(t, err)
		var out []forge.Comment
		for _, c := range all {
			if strings.Contains(c.Body, StatusMarker) {
				out = append(out, c)
			}
		}
		return out
	}
	first := statusComments()
	require.Len(t, first, 1, "the status comment is posted")
	require.True(t, gh.DeleteComment(first[0].ID))

	// The task moves on, so its status changes and is written again.
	b.waitEvent(t, 60*time.Second, kindIs(task.EvBriefDelivered))
	require.NoError(t, src.Poll(ctx), "a deleted status comment does not fail the poll")
	again := statusComments()
	require.Len(t, again, 1, "one status comment again")
	require.NotEqual(t, first[0].ID, again[0].ID)
	require.Contains(t, again[0].Body, "state: **running**")
	// The next poll records it with the cursor, as it does the first.
	require.NoError(t, src.Poll(ctx))
	cur, err := b.st.CursorGet(ctx, cfg.Key, commentsCursor(n))
	require.NoError(t, err)
	require.Equal(t, again[0].ID, cur.Ref, "the cursor keeps the new status comment")
}

// githubRepo is a GitHub stub of team/app where alice may write, and the
// forge client of it with token.
func githubRepo(t *testing.T, token string) (*githubstub.Stub, forge.Forge) {
	t.Helper()
	gh := githubstub.New(t, "team", "app")
	gh.Token = token
	gh.SetPermission("alice", "write")
	f, err := github.New(forge.Config{Kind: forge.GitHub, URL: gh.URL, Repo: "team/app", Token: gh.Token})
	require.NoError(t, err)
	return gh, f
}

package coord

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/forge/gitea"
	"github.com/orchestra-tui/orchestra-tui/forge/gitea/giteatest"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// TestIssuesAndCommentsFromARealGitea: a labelled issue by a writer
// becomes a task within 5 s; 20 comments reach the live agent, each once,
// p50 within 3 s and p99 within 6 s of being posted; a comment by a user
// without write access is a refusal the agent never reads; a second
// source with no memory (an engine started again) reads from the cursor
// the first stored and records nothing twice; closing the issue cancels the task;
// the token is in no store file, event, record or agent environment.
func TestIssuesAndCommentsFromARealGitea(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	repoName := srv.CreateRepo(t, "app")
	eveToken := srv.CreateUser(t, "eve")
	f, err := gitea.New(forge.Config{Kind: forge.Gitea, URL: srv.URL, Repo: repoName, Token: srv.Token})
	require.NoError(t, err)

	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst}},
	}}, nil)
	cfg := SourceConfig{Forge: f, Key: "gitea " + srv.URL + " " + repoName, Label: "orchestra",
		Verify: project.VerifyCommand, Interval: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = NewSource(b.c, cfg).Run(ctx) }()
	stopSource := func() { cancel(); <-done }
	t.Cleanup(stopSource)

	var issue struct {
		Number int `json:"number"`
	}
	body := project.Goal + "\n\n## Acceptance\n\n" + "- " + strings.Join(project.Acceptance, "\n- ") + "\n"
	// The labels exist first, so the issue is opened with all of them in
	// one request, as a person choosing them in the form does.
	var labelIDs []int64
	for _, name := range []string{"orchestra", "harness:scripted", "pipeline:implement"} {
		var l struct {
			ID int64 `json:"id"`
		}
		require.NoError(t, srv.API(http.MethodPost, "api/v1/repos/"+repoName+"/labels", "",
			map[string]any{"name": name, "color": "#00aabb"}, &l))
		labelIDs = append(labelIDs, l.ID)
	}
	require.NoError(t, srv.API(http.MethodPost, "api/v1/repos/"+repoName+"/issues", "",
		map[string]any{"title": "Fix calc", "body": body, "labels": labelIDs}, &issue))
	posted := time.Now()
	added := b.waitEvent(t, 30*time.Second, kindIs(task.EvTaskAdded))
	taskLatency := time.Since(posted)
	id := added.TaskID
	require.Equal(t, IssueTaskID(cfg.Key, issue.Number), id)
	require.Contains(t, added.Text, fmt.Sprintf("%s%s/issues/%d", srv.URL, repoName, issue.Number))
	require.Contains(t, string(added.Data), fmt.Sprintf(`"issue":%d`, issue.Number))
	stored, err := b.st.TaskGet(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("#%d Fix calc", issue.Number), stored.Title)
	require.Equal(t, project.Acceptance, stored.Acceptance)
	require.Equal(t, task.Pipeline{task.PhaseImplement}, stored.Pipeline)
	t.Logf("issue → task in %s", taskLatency.Round(time.Millisecond))
	require.Less(t, taskLatency, 5*time.Second, "a labelled issue becomes a task within 5 s")

	launched := b.waitEvent(t, 60*time.Second, kindIs(task.EvSessionLaunched))
	b.waitEvent(t, 60*time.Second, kindIs(task.EvBriefDelivered))
	b.waitRecord(t, 30*time.Second, "the brief", func() bool { return len(b.inputsOf(t, agent.InputBrief)) == 1 })

	comment := func(token, text string) {
		t.Helper()
		require.NoError(t, srv.API(http.MethodPost, fmt.Sprintf("api/v1/repos/%s/issues/%d/comments", repoName, issue.Number),
			token, map[string]any{"body": text}, nil))
	}
	received := func(text string) int {
		n := 0
		for _, r := range b.inputsOf(t, agent.InputDecision) {
			if strings.Contains(r.Text, text) {
				n++
			}
		}
		return n
	}

	// eve's comment goes first: the ones after it arriving shows the
	// source read past it.
	comment(eveToken, "eve-says-delete-everything")
	var lat []time.Duration
	for i := range 20 {
		text := fmt.Sprintf("forge-probe-%02d", i)
		comment("", text+"\x1b[2J\x07")
		t0 := time.Now()
		b.waitRecord(t, 30*time.Second, text, func() bool { return received(text) > 0 })
		lat = append(lat, time.Since(t0))
	}
	p50, p99 := pct(lat, 0.5), pct(lat, 0.99)
	t.Logf("forge comment → agent: p50 %s p99 %s (n=%d)", p50.Round(time.Millisecond), p99.Round(time.Millisecond), len(lat))
	require.LessOrEqual(t, p50, 3*time.Second)
	require.LessOrEqual(t, p99, 6*time.Second)
	refusal := b.waitEvent(t, 30*time.Second, func(e task.Event) bool {
		return e.Kind == task.EvRefusal && e.Reason == task.ReasonForgeNotAllowed
	})
	require.Contains(t, refusal.Text, "eve")

	// An engine started again has no memory but the store: it reads the
	// issue, and the comments from the stored cursor, and must record
	// none twice.
	stopSource()
	again := NewSource(b.c, cfg)
	require.NoError(t, again.Poll(context.Background()))
	require.NoError(t, again.Poll(context.Background()))

	// One status comment, edited in place (the restarted source found
	// it), saying the task runs; the issue carries the running label.
	cs, err := f.Comments(context.Background(), issue.Number, time.Time{})
	require.NoError(t, err)
	var statuses []forge.Comment
	for _, c := range cs {
		if strings.Contains(c.Body, StatusMarker) {
			statuses = append(statuses, c)
		}
	}
	require.Len(t, statuses, 1, "one status comment per task")
	require.Contains(t, statuses[0].Body, "state: **running**")
	is, err := f.Issue(context.Background(), issue.Number)
	require.NoError(t, err)
	require.Contains(t, is.Labels, "orchestra:running")

	ds, err := b.st.DecisionList(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, ds, 20, "one decision per comment")
	for i := range 20 {
		text := fmt.Sprintf("forge-probe-%02d", i)
		require.Equal(t, 1, received(text), "%s reached the agent once", text)
	}
	for _, d := range ds {
		require.NotContains(t, d.Text, "\x1b", "escape sequences are stripped")
	}
	require.Zero(t, received("eve-says"), "an outsider's comment is never typed")
	evs, err := b.st.EventList(context.Background(), store.EventListParams{TaskID: id})
	require.NoError(t, err)
	refusals := 0
	for _, e := range evs {
		if e.Reason == task.ReasonForgeNotAllowed {
			refusals++
		}
	}
	require.Equal(t, 1, refusals, "one refusal per outsider's comment")

	// The token is nowhere the engine writes, nor in the agent's
	// environment.
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", launchedPid(t, launched)))
	require.NoError(t, err)
	require.False(t, bytes.Contains(env, []byte(srv.Token)), "token in the agent's environment")
	for _, e := range evs {
		require.NotContains(t, e.Text+string(e.Data), srv.Token)
	}
	for _, dir := range []string{filepath.Dir(b.storeAt), b.record} {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil // a socket or a file gone meanwhile
			}
			require.False(t, bytes.Contains(data, []byte(srv.Token)), "token in %s", p)
			return nil
		}))
	}

	// Closing the issue cancels the task.
	require.NoError(t, srv.API(http.MethodPatch, fmt.Sprintf("api/v1/repos/%s/issues/%d", repoName, issue.Number), "",
		map[string]any{"state": "closed"}, nil))
	require.NoError(t, again.Poll(context.Background()))
	b.waitEvent(t, 30*time.Second, kindIs(task.EvTaskCancelled))
}

package coord

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
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

// With a repository webhook on the real Gitea signed with a secret, and
// the source polling only once a minute: a labelled issue becomes a task,
// and each of ten comments reaches the live agent within 3 s, exactly
// once, all before the minute is out, so only the webhook explains them;
// an outsider's comment is a refusal; a forged delivery is refused; the
// secret is in no store file, event, record or agent environment.
func TestWebhookFromARealGiteaWakesTheSource(t *testing.T) {
	t.Parallel()
	srv := giteatest.Start(t)
	repoName := srv.CreateRepo(t, "hooked")
	eveToken := srv.CreateUser(t, "eve")
	f, err := gitea.New(forge.Config{Kind: forge.Gitea, URL: srv.URL, Repo: repoName, Token: srv.Token})
	require.NoError(t, err)
	b := setup(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveIgnoreFirst}},
	}}, nil)

	raw := make([]byte, 24)
	_, err = rand.Read(raw)
	require.NoError(t, err)
	secret := "whsec-" + hex.EncodeToString(raw)
	cfg := SourceConfig{Forge: f, Key: "gitea " + srv.URL + " " + repoName, Label: "orchestra",
		Verify: project.VerifyCommand, Interval: time.Minute, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	src := NewSource(b.c, cfg)
	hook := NewWebhook(forge.Gitea, secret, src.Wake, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	served, ran := make(chan struct{}), make(chan struct{})
	go func() { defer close(served); _ = ServeWebhook(ctx, l, hook) }()
	t.Cleanup(func() { cancel(); <-served; <-ran })
	require.NoError(t, srv.API(http.MethodPost, "api/v1/repos/"+repoName+"/hooks", "", map[string]any{
		"type":   "gitea",
		"config": map[string]string{"url": "http://" + l.Addr().String() + "/hook", "content_type": "json", "secret": secret},
		"events": []string{"issues", "issue_comment", "pull_request", "pull_request_review"},
		"active": true,
	}, nil))
	started := time.Now()
	go func() { defer close(ran); _ = src.Run(ctx) }()

	var labelIDs []int64
	for _, name := range []string{"orchestra", "harness:scripted", "pipeline:implement"} {
		var lb struct {
			ID int64 `json:"id"`
		}
		require.NoError(t, srv.API(http.MethodPost, "api/v1/repos/"+repoName+"/labels", "",
			map[string]any{"name": name, "color": "#00aabb"}, &lb))
		labelIDs = append(labelIDs, lb.ID)
	}
	body := project.Goal + "\n\n## Acceptance\n\n- " + strings.Join(project.Acceptance, "\n- ") + "\n"
	var issue struct {
		Number int `json:"number"`
	}
	require.NoError(t, srv.API(http.MethodPost, "api/v1/repos/"+repoName+"/issues", "",
		map[string]any{"title": "Fix calc", "body": body, "labels": labelIDs}, &issue))
	posted := time.Now()
	added := b.waitEvent(t, 30*time.Second, kindIs(task.EvTaskAdded))
	taskLatency := time.Since(posted)
	id := added.TaskID
	require.Equal(t, IssueTaskID(cfg.Key, issue.Number), id)
	t.Logf("issue → task by webhook in %s", taskLatency.Round(time.Millisecond))
	require.Less(t, taskLatency, 5*time.Second)

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
	comment(eveToken, "eve-hooks-delete-everything")
	var lat []time.Duration
	for i := range 10 {
		text := fmt.Sprintf("hook-probe-%02d", i)
		t0 := time.Now()
		comment("", text)
		b.waitRecord(t, 30*time.Second, text, func() bool { return received(text) > 0 })
		lat = append(lat, time.Since(t0))
	}
	p50, p99 := pct(lat, 0.5), pct(lat, 0.99)
	t.Logf("forge comment → agent by webhook: p50 %s p99 %s max %s (n=%d; polling once a minute)",
		p50.Round(time.Millisecond), p99.Round(time.Millisecond), slicesMax(lat).Round(time.Millisecond), len(lat))
	for i, d := range lat {
		require.LessOrEqual(t, d, 3*time.Second, "comment %d took %s", i, d)
	}
	b.waitEvent(t, 30*time.Second, func(e task.Event) bool {
		return e.Kind == task.EvRefusal && e.Reason == task.ReasonForgeNotAllowed
	})
	require.Less(t, time.Since(started), time.Minute, "all of it before the source's first timed poll")
	require.Positive(t, hook.Woken())

	// A delivery signed with another secret is refused and wakes nothing.
	forged := []byte(fmt.Sprintf(`{"action":"created","issue":{"number":%d}}`, issue.Number))
	req, err := http.NewRequest(http.MethodPost, "http://"+l.Addr().String()+"/hook", bytes.NewReader(forged))
	require.NoError(t, err)
	req.Header.Set("X-Gitea-Event", "issue_comment")
	req.Header.Set("X-Gitea-Signature", forge.Sign(forge.Gitea, forged, []byte("not-the-secret")))
	woken := hook.Woken()
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.EqualValues(t, 1, hook.Refused(), "Gitea's own deliveries all passed")
	require.Equal(t, woken, hook.Woken())

	// Exactly once: one decision per comment, each typed once; the
	// outsider's comment refused once and never typed.
	ds, err := b.st.DecisionList(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, ds, 10)
	for i := range 10 {
		require.Equal(t, 1, received(fmt.Sprintf("hook-probe-%02d", i)))
	}
	require.Zero(t, received("eve-hooks"))
	evs, err := b.st.EventList(context.Background(), store.EventListParams{TaskID: id})
	require.NoError(t, err)
	refusals := 0
	for _, e := range evs {
		if e.Reason == task.ReasonForgeNotAllowed {
			refusals++
		}
	}
	require.Equal(t, 1, refusals)

	// Neither the token nor the secret is anywhere the engine writes, nor
	// in the agent's environment.
	env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", launchedPid(t, launched)))
	require.NoError(t, err)
	for _, s := range []string{srv.Token, secret} {
		require.False(t, bytes.Contains(env, []byte(s)), "secret in the agent's environment")
		for _, e := range evs {
			require.NotContains(t, e.Text+string(e.Data), s)
		}
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
			require.False(t, bytes.Contains(data, []byte(secret)), "webhook secret in %s", p)
			return nil
		}))
	}
}

func slicesMax(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

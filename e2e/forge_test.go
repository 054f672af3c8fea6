package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/forge/gitea"
	"github.com/orchestra-tui/orchestra-tui/forge/gitea/giteatest"
	"github.com/orchestra-tui/orchestra-tui/forge/github/githubstub"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// forgeRun is a background engine process of the fixture's repository fed
// by a real Gitea's issues, and the test's handles on both.
type forgeRun struct {
	f    fixture
	srv  *giteatest.Server
	repo string // owner/name on the server
	key  string // the source's key (coord.SourceConfig.Key)
	fg   forge.Forge
	st   store.Store
}

func (r *forgeRun) api(t *testing.T, method, path, token string, body, out any) {
	t.Helper()
	require.NoError(t, r.srv.API(method, "api/v1/repos/"+r.repo+"/"+path, token, body, out))
}

func (r *forgeRun) comment(t *testing.T, number int, token, text string) {
	t.Helper()
	r.api(t, http.MethodPost, fmt.Sprintf("issues/%d/comments", number), token, map[string]any{"body": text}, nil)
}

// issue opens an issue with labels (created first, as a person picks them
// in the form) and returns its number.
func (r *forgeRun) issue(t *testing.T, title, body string, labels ...string) int {
	t.Helper()
	// Gitea accepts a second label of one name, and filters issues by the
	// first: an issue given a duplicate "orchestra" label would never be
	// listed. A label made by an earlier issue is looked up first.
	var all []struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}
	r.api(t, http.MethodGet, "labels?limit=50", "", nil, &all)
	var ids []int64
	for _, name := range labels {
		var l struct {
			ID int64 `json:"id"`
		}
		for _, a := range all {
			if a.Name == name && l.ID == 0 {
				l.ID = a.ID
			}
		}
		if l.ID == 0 {
			r.api(t, http.MethodPost, "labels", "", map[string]any{"name": name, "color": "#00aabb"}, &l)
			require.NotZero(t, l.ID, "label %s", name)
		}
		ids = append(ids, l.ID)
	}
	var is struct {
		Number int `json:"number"`
	}
	r.api(t, http.MethodPost, "issues", "", map[string]any{"title": title, "body": body, "labels": ids}, &is)
	return is.Number
}

// events is the task's ledger.
func (r *forgeRun) events(t *testing.T, id task.ID) []task.Event {
	t.Helper()
	evs, err := r.st.EventList(context.Background(), store.EventListParams{TaskID: id})
	require.NoError(t, err)
	return evs
}

func (r *forgeRun) count(t *testing.T, id task.ID, ok func(task.Event) bool) int {
	t.Helper()
	n := 0
	for _, e := range r.events(t, id) {
		if ok(e) {
			n++
		}
	}
	return n
}

// waitFor polls (at the e2e glance interval) until ok or d has passed.
func waitFor(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	tick := time.NewTicker(lookInterval)
	defer tick.Stop()
	deadline := time.After(d)
	for !ok() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%s: not after %s", what, d)
		}
	}
}

func (r *forgeRun) state(t *testing.T, id task.ID) task.State {
	t.Helper()
	tk, err := r.st.TaskGet(context.Background(), id)
	if err != nil {
		return ""
	}
	return tk.State
}

// received is what the agents got whose text holds s, in order.
func (r *forgeRun) received(t *testing.T, s string) []agent.InputRecord {
	t.Helper()
	recs, err := agent.ReadInputLog(r.f.record)
	require.NoError(t, err)
	var out []agent.InputRecord
	for _, rec := range recs {
		if strings.Contains(rec.Text, s) {
			out = append(out, rec)
		}
	}
	return out
}

// engineUp starts the repository's background engine and returns its pid.
func (r *forgeRun) engineUp(t *testing.T) int {
	t.Helper()
	r.f.orch(t, "engine")
	pid := engine.LockHolder(engine.PathsFor(r.f.root).Lock)
	require.Positive(t, pid)
	return pid
}

// TestForgeIssuesCommentsAndPullRequestOnARealGitea is the run of the
// forge issue against a real Gitea and a real background engine:
//
//   - an issue labelled orchestra by a writer is a task within 5 s;
//   - 20 comments reach the live agent, each exactly once, p50 within 3 s
//     and p99 within 6 s, across a kill -9 of the engine between two of
//     them (the comment posted while no engine runs reaches the agent the
//     next engine adopted, once);
//   - a comment by a user without write access is never typed and is a
//     refusal;
//   - Gitea stopped for 60 s, comments posted just before and after:
//     none lost, none doubled;
//   - closing the issue cancels the task and its status comment says so;
//   - a second issue's task runs green, approve opens the pull request
//     with "Closes #N"; a review requesting changes with a comment on a
//     line of calc.go sends it back to implement, and the comment reaches
//     the agent with its file and line, once; approved again and merged
//     on Gitea, the task is merged, the issue closed, and the status
//     comment shows the verdict;
//   - the token is in no store row, event, recording, log, handoff file or
//     agent's environment.
func TestForgeIssuesCommentsAndPullRequestOnARealGitea(t *testing.T) {
	parallel(t)
	srv := giteatest.Start(t)
	repoName := srv.CreateRepo(t, "calc")
	aliceToken := srv.CreateUser(t, "alice")
	srv.AddCollaborator(t, repoName, "alice", "write")
	eveToken := srv.CreateUser(t, "eve")

	tokenFile := filepath.Join(t.TempDir(), "gitea.token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(srv.Token+"\n"), 0o600))
	extra := fmt.Sprintf("[source]\nforge = \"gitea\"\nurl = %q\nrepo = %q\nlabel = \"orchestra\"\ntoken_file = %q\n\n[finalise]\npr = true\n",
		srv.URL, repoName, tokenFile)
	f := newRepoFixture(t, agent.Script{Phases: map[task.Phase][]agent.Entry{
		// The first issue's task sits in plan, live, taking comments.
		task.PhasePlan:      {{Behave: agent.BehaveStall}},
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}, extra)
	t.Cleanup(func() { _, _ = runIn(f, "stop") })
	// Gitea's repository is the remote the pull request's branch goes to;
	// git pushes with the admin's password, never the API token.
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	u.User = url.UserPassword(srv.Admin, srv.Password)
	u.Path = "/" + repoName + ".git"
	require.NoError(t, project.Git(f.root, "remote", "add", "origin", u.String()))
	require.NoError(t, project.Git(f.root, "push", "-q", "-f", "origin", "main"))

	fg, err := gitea.New(forge.Config{Kind: forge.Gitea, URL: srv.URL, Repo: repoName, Token: srv.Token})
	require.NoError(t, err)
	st, err := sqlite.Open(sqlite.DefaultPath(f.root))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	r := &forgeRun{f: f, srv: srv, repo: repoName, key: "gitea " + srv.URL + " " + repoName, fg: fg, st: st}
	pid := r.engineUp(t)

	verify := "\n\n```verify\n" + project.VerifyCommand + "\n```\n"
	body := project.Goal + "\n\n## Acceptance\n\n- " + strings.Join(project.Acceptance, "\n- ") + verify
	posted := time.Now()
	first := r.issue(t, "Fix calc", body, "orchestra", "harness:scripted", "pipeline:plan,implement")
	id := coord.IssueTaskID(r.key, first)
	waitFor(t, 30*time.Second, "the issue's task", func() bool { return r.state(t, id) != "" })
	toTask := time.Since(posted)
	t.Logf("issue → task in %s", toTask.Round(time.Millisecond))
	require.Less(t, toTask, 5*time.Second, "a labelled issue becomes a task within 5 s")
	tk, err := st.TaskGet(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("#%d Fix calc", first), tk.Title)
	require.Equal(t, project.VerifyCommand, tk.Verify)
	require.Equal(t, project.Acceptance, tk.Acceptance)
	waitFor(t, 120*time.Second, "the plan agent's brief", func() bool { return len(r.received(t, task.HeadingPhasePrefix)) > 0 })

	// eve may not write: her comment is a refusal, never typed.
	r.comment(t, first, eveToken, "eve-says-delete-everything")

	var lat []time.Duration
	var afterKill time.Duration
	const n = 20
	for i := range n {
		text := fmt.Sprintf("forge-probe-%02d", i)
		if i == n/2 {
			// kill -9 between two comments: this one is posted while no
			// engine runs, and the next engine, adopting the live plan
			// agent, delivers it.
			require.NoError(t, syscall.Kill(pid, syscall.SIGKILL))
			waitFor(t, 30*time.Second, "the killed engine's lock", func() bool { return !engine.Held(engine.PathsFor(f.root).Lock) })
			t0 := time.Now()
			r.comment(t, first, aliceToken, text+"\x1b[2J\x07")
			pid = r.engineUp(t)
			waitFor(t, 60*time.Second, text+" after the restart", func() bool { return len(r.received(t, text)) > 0 })
			afterKill = r.received(t, text)[0].At.Sub(t0)
			t.Logf("the comment posted with no engine reached the agent %s after it was posted (engine start and adoption included)", afterKill.Round(time.Millisecond))
			require.Equal(t, 1, r.count(t, id, func(e task.Event) bool { return e.Kind == task.EvSessionAdopted }), "the next engine adopted the agent")
			continue
		}
		t0 := time.Now()
		r.comment(t, first, aliceToken, text+"\x1b[2J\x07")
		waitFor(t, 30*time.Second, text, func() bool { return len(r.received(t, text)) > 0 })
		lat = append(lat, r.received(t, text)[0].At.Sub(t0))
	}
	slices.Sort(lat)
	p50, p99 := lat[len(lat)/2], lat[min(len(lat)-1, len(lat)*99/100)]
	t.Logf("forge comment → live agent over a real Gitea: p50 %s p99 %s max %s (n=%d with an engine up; +1 across the kill -9: %s)",
		p50.Round(time.Millisecond), p99.Round(time.Millisecond), lat[len(lat)-1].Round(time.Millisecond), len(lat), afterKill.Round(time.Millisecond))
	require.LessOrEqual(t, p50, 3*time.Second)
	require.LessOrEqual(t, p99, 6*time.Second)

	// Once each: a comment the killed engine may have read and the next
	// one read again is still one decision and one delivery.
	ds, err := st.DecisionList(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, ds, n, "one decision per comment")
	for i := range n {
		text := fmt.Sprintf("forge-probe-%02d", i)
		require.Len(t, r.received(t, text), 1, "%s reached the agent once", text)
	}
	for _, d := range ds {
		require.NotContains(t, d.Text, "\x1b", "escape sequences are stripped")
		require.Equal(t, "alice (forge)", d.Author)
	}
	require.Empty(t, r.received(t, "eve-says"), "an outsider's comment is never typed")
	require.Equal(t, 1, r.count(t, id, func(e task.Event) bool { return e.Reason == task.ReasonForgeNotAllowed }), "one refusal for eve's comment")

	// Gitea stopped for 60 s: comments posted just before the stop and
	// queued after it returns all reach the agent, once each.
	var outage []string
	for i := range 3 {
		text := fmt.Sprintf("before-outage-%d", i)
		r.comment(t, first, aliceToken, text)
		outage = append(outage, text)
	}
	srv.Stop()
	down := time.Now()
	waiting(t)
	<-time.After(60 * time.Second) // the outage itself is what is tested
	require.NoError(t, srv.Restart())
	t.Logf("Gitea was down %s", time.Since(down).Round(time.Second))
	back := time.Now()
	for i := range 3 {
		text := fmt.Sprintf("after-outage-%d", i)
		r.comment(t, first, aliceToken, text)
		outage = append(outage, text)
	}
	for _, text := range outage {
		waitFor(t, 60*time.Second, text+" across the outage", func() bool { return len(r.received(t, text)) > 0 })
	}
	t.Logf("every comment of the outage reached the agent %s after Gitea was back", time.Since(back).Round(time.Millisecond))
	for _, text := range outage {
		require.Len(t, r.received(t, text), 1, "%s reached the agent once", text)
	}
	ds, err = st.DecisionList(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, ds, n+len(outage), "one decision per comment across the outage")

	// alice edits the issue's body after launch: the agent gets one
	// decision quoting the new text; the task's verify stays as it was.
	const editNote = "edit-probe-keep-Mul-pure"
	r.api(t, http.MethodPatch, fmt.Sprintf("issues/%d", first), aliceToken, map[string]any{"body": body + "\n" + editNote + "\n"}, nil)
	waitFor(t, 30*time.Second, "the edit at the agent", func() bool { return len(r.received(t, editNote)) > 0 })
	require.Contains(t, r.received(t, editNote)[0].Text, "edited since this task was made from it")
	ds, err = st.DecisionList(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, ds, n+len(outage)+1, "one decision for the edit")

	// The agent's environment, read while it lives.
	agentEnv := agentEnvironments(t, f.script)
	require.NotEmpty(t, agentEnv, "the live plan agent")

	// Closing the issue cancels the task; the status comment says so.
	r.api(t, http.MethodPatch, fmt.Sprintf("issues/%d", first), "", map[string]any{"state": "closed"}, nil)
	waitFor(t, 30*time.Second, "the cancel of a closed issue's task", func() bool { return r.state(t, id) == task.StateCancelled })
	waitFor(t, 30*time.Second, "the closed issue's final status", func() bool {
		return strings.Contains(statusComment(t, fg, first), "state: **cancelled**")
	})

	// The second issue goes the whole way to a merged pull request.
	posted2, dumped := time.Now(), false
	second := r.issue(t, "Fix calc again", body, "orchestra", "harness:scripted", "pipeline:implement")
	id2 := coord.IssueTaskID(r.key, second)
	waitFor(t, 180*time.Second, "the second task green and awaiting review", func() bool {
		if r.state(t, id2) == task.StateAwaitingReview {
			return true
		}
		if time.Since(posted2) > 170*time.Second && !dumped {
			dumped = true
			evs, _ := st.EventList(context.Background(), store.EventListParams{})
			for _, e := range evs {
				t.Logf("%s %s %s %s", e.At.Format("15:04:05.000"), e.TaskID, e.Kind, e.Text)
			}
		}
		return false
	})
	out := f.orch(t, "approve", string(id2))
	require.Contains(t, out, "pull request #")
	waitFor(t, 30*time.Second, "pr-open", func() bool { return r.state(t, id2) == task.StatePullOpen })
	pd, err := coord.ReadPull(context.Background(), st, id2)
	require.NoError(t, err)
	require.NotNil(t, pd)
	pr, err := fg.PullRequest(context.Background(), pd.Number)
	require.NoError(t, err)
	var pull struct {
		Body string `json:"body"`
		Head struct {
			Sha string `json:"sha"`
			Ref string `json:"ref"`
		} `json:"head"`
	}
	r.api(t, http.MethodGet, fmt.Sprintf("pulls/%d", pr.Number), "", nil, &pull)
	require.Contains(t, pull.Body, fmt.Sprintf("Closes #%d", second))
	require.Contains(t, pull.Body, "## Verdict\n\n✓")

	// alice asks for changes with a comment on a changed line of calc.go.
	line := firstAddedLine(t, f.root, "main", pull.Head.Ref, "calc.go")
	const lineNote = "line-note-keep-the-overflow-check"
	r.api(t, http.MethodPost, fmt.Sprintf("pulls/%d/reviews", pr.Number), aliceToken, map[string]any{
		"event": "REQUEST_CHANGES", "body": "see the line", "commit_id": pull.Head.Sha,
		"comments": []map[string]any{{"path": "calc.go", "new_position": line, "body": lineNote}},
	}, nil)
	waitFor(t, 60*time.Second, "the task sent back by the review", func() bool {
		return r.count(t, id2, func(e task.Event) bool { return e.Kind == task.EvTaskRequeued }) > 0
	})
	waitFor(t, 120*time.Second, "the line comment at the agent", func() bool { return len(r.received(t, lineNote)) > 0 })
	got := r.received(t, lineNote)
	require.Len(t, got, 1, "the line comment reached the agent once")
	require.Contains(t, got[0].Text, fmt.Sprintf("calc.go:%d", line), "with its file and line")
	ds2, err := st.DecisionList(context.Background(), id2)
	require.NoError(t, err)
	require.Len(t, ds2, 1)
	require.NotNil(t, ds2[0].Anchor)
	require.Equal(t, store.Anchor{File: "calc.go", Line: line}, store.Anchor{File: ds2[0].Anchor.File, Line: ds2[0].Anchor.Line})

	waitFor(t, 180*time.Second, "the second task green again", func() bool { return r.state(t, id2) == task.StateAwaitingReview })
	f.orch(t, "approve", string(id2))
	waitFor(t, 30*time.Second, "pr-open again", func() bool { return r.state(t, id2) == task.StatePullOpen })
	r.api(t, http.MethodPost, fmt.Sprintf("pulls/%d/merge", pr.Number), "", map[string]any{"Do": "merge"}, nil)
	waitFor(t, 60*time.Second, "the task merged", func() bool { return r.state(t, id2) == task.StateMerged })
	is, err := fg.Issue(context.Background(), second)
	require.NoError(t, err)
	require.False(t, is.Open, "merging the pull request closed the issue")
	waitFor(t, 30*time.Second, "the final status comment", func() bool {
		s := statusComment(t, fg, second)
		return strings.Contains(s, "state: **merged**") && strings.Contains(s, "verdict: ✓")
	})
	require.Len(t, r.received(t, lineNote), 1, "still once")
	require.Len(t, r.received(t, editNote), 1, "the edit reached the agent once")

	// A handoff of the forge task, grepped with the rest.
	handoff := filepath.Join(t.TempDir(), "handoff.json")
	f.orch(t, "handoff", "export", string(id2), "--out", handoff)

	// The token: in no store row, event, recording, log or handoff file
	// (everything under the repository and the agents' record), nor in
	// an agent's environment.
	tok := []byte(srv.Token)
	for _, env := range append(agentEnv, agentEnvironments(t, f.script)...) {
		require.False(t, bytes.Contains(env, tok), "the token is in an agent's environment")
	}
	for _, e := range append(r.events(t, id), r.events(t, id2)...) {
		require.NotContains(t, e.Text+string(e.Data), srv.Token)
	}
	files := 0
	for _, dir := range []string{f.root, f.record, filepath.Dir(handoff)} {
		require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return nil // a socket, or gone meanwhile
			}
			files++
			require.False(t, bytes.Contains(data, tok), "the token is in %s", p)
			return nil
		}))
	}
	t.Logf("the token is in none of %d files", files)
}

// statusComment is the body of the status comment on issue n, or "".
func statusComment(t *testing.T, fg forge.Forge, n int) string {
	t.Helper()
	cs, err := fg.Comments(context.Background(), n, time.Time{})
	require.NoError(t, err)
	var out []string
	for _, c := range cs {
		if strings.Contains(c.Body, coord.StatusMarker) {
			out = append(out, c.Body)
		}
	}
	require.LessOrEqual(t, len(out), 1, "one status comment per task")
	if len(out) == 0 {
		return ""
	}
	return out[0]
}

var hunkHead = regexp.MustCompile(`(?m)^@@ -\d+(?:,\d+)? \+(\d+)`)

// firstAddedLine is the new-side number of the first line the branch adds
// to file.
func firstAddedLine(t *testing.T, root, base, branch, file string) int {
	t.Helper()
	out, err := exec.Command("git", "-C", root, "diff", "-U0", base+"..."+branch, "--", file).CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := hunkHead.FindSubmatch(out)
	require.NotNil(t, m, "the branch changes %s: %s", file, out)
	line, err := strconv.Atoi(string(m[1]))
	require.NoError(t, err)
	return line
}

// agentEnvironments reads the environment of every live process whose
// command line names script (the fixture's scripted agents).
func agentEnvironments(t *testing.T, script string) [][]byte {
	t.Helper()
	procs, err := filepath.Glob("/proc/[0-9]*/cmdline")
	require.NoError(t, err)
	var out [][]byte
	for _, p := range procs {
		cmd, err := os.ReadFile(p)
		if err != nil || !bytes.Contains(cmd, []byte("--script\x00"+script)) {
			continue
		}
		env, err := os.ReadFile(filepath.Join(filepath.Dir(p), "environ"))
		if err == nil {
			out = append(out, env)
		}
	}
	return out
}

// TestFleetTwoEnginesOneSource: two engines on one PostgreSQL store with
// the same [source] (GitHub, its stub) read the same issues and comments:
// each issue is one task, each comment one decision, delivered once; the
// token is in no store row, file, log or agent environment.
func TestFleetTwoEnginesOneSource(t *testing.T) {
	parallel(t)
	gh := githubstub.New(t, "team", "calc")
	gh.Token = "ghp_fleet_source_token"
	gh.SetPermission("alice", "write")
	tokenFile := filepath.Join(t.TempDir(), "github.token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(gh.Token+"\n"), 0o600))
	f := newFleetWith(t, []string{"machine-a", "machine-b"}, 2, agent.Script{Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Behave: agent.BehaveStall}},
	}})
	source := fmt.Sprintf("\n[source]\nforge = \"github\"\nurl = %q\nrepo = \"team/calc\"\nlabel = \"orchestra\"\ntoken_file = %q\n", gh.URL, tokenFile)
	for _, e := range f.engines {
		fh, err := os.OpenFile(filepath.Join(e.dir, "orchestra.toml"), os.O_APPEND|os.O_WRONLY, 0)
		require.NoError(t, err)
		_, err = fh.WriteString(source)
		require.NoError(t, err)
		require.NoError(t, fh.Close())
	}
	f.start(t, "machine-a")
	f.start(t, "machine-b")
	key := "github " + gh.URL + " team/calc"
	body := project.Goal + "\n\n```verify\n" + project.VerifyCommand + "\n```\n"
	var issues []int
	for i := range 3 {
		issues = append(issues, gh.AddIssue("alice", fmt.Sprintf("Fix calc %d", i), body, "orchestra", "harness:scripted", "pipeline:implement"))
	}
	ctx := context.Background()
	launched := func(id task.ID) bool {
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
		require.NoError(t, err)
		return slices.ContainsFunc(evs, func(e task.Event) bool { return e.Kind == task.EvBriefDelivered })
	}
	f.waitStore(t, 3*time.Minute, "every issue's task live", func() bool {
		for _, n := range issues {
			if !launched(coord.IssueTaskID(key, n)) {
				return false
			}
		}
		return true
	})
	const per = 4
	for _, n := range issues {
		for j := range per {
			gh.AddComment(n, "alice", fmt.Sprintf("fleet-note-%d-%d", n, j))
		}
	}
	delivered := func(id task.ID) int {
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: id})
		require.NoError(t, err)
		k := 0
		for _, e := range evs {
			if e.Kind == task.EvDecisionDelivered {
				k++
			}
		}
		return k
	}
	f.waitStore(t, 2*time.Minute, "every comment delivered", func() bool {
		for _, n := range issues {
			if delivered(coord.IssueTaskID(key, n)) < per {
				return false
			}
		}
		return true
	})
	// A few more polls of both engines: nothing doubles.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-f.changes:
		case <-time.After(time.Until(deadline)):
		}
	}
	tasks, err := f.st.TaskList(ctx, store.TaskListParams{})
	require.NoError(t, err)
	require.Len(t, tasks, len(issues), "one task per issue")
	for _, n := range issues {
		id := coord.IssueTaskID(key, n)
		ds, err := f.st.DecisionList(ctx, id)
		require.NoError(t, err)
		require.Len(t, ds, per, "one decision per comment of #%d", n)
		require.Equal(t, per, delivered(id), "each comment of #%d delivered once", n)
	}

	// The token: in no event or decision of the shared store, no file of
	// either machine's repository (recordings, handoff files), no
	// engine's log, no agent's environment.
	for _, tk := range tasks {
		evs, err := f.st.EventList(ctx, store.EventListParams{TaskID: tk.ID})
		require.NoError(t, err)
		for _, e := range evs {
			require.NotContains(t, e.Text+string(e.Data), gh.Token)
		}
		ds, err := f.st.DecisionList(ctx, tk.ID)
		require.NoError(t, err)
		for _, d := range ds {
			require.NotContains(t, d.Text+d.Author, gh.Token)
		}
	}
	envs := agentEnvironments(t, f.script)
	require.NotEmpty(t, envs, "the live agents")
	for _, env := range envs {
		require.False(t, bytes.Contains(env, []byte(gh.Token)), "the token is in an agent's environment")
	}
	for _, e := range f.engines {
		for _, dir := range []string{e.dir, filepath.Dir(e.log.Name())} {
			require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return nil // a socket, or gone meanwhile
				}
				require.False(t, bytes.Contains(data, []byte(gh.Token)), "the token is in %s", p)
				return nil
			}))
		}
	}
}

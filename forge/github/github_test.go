package github_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/forge/forgetest"
	"github.com/orchestra-tui/orchestra-tui/forge/github"
	"github.com/orchestra-tui/orchestra-tui/forge/github/githubstub"
)

// seeder acts on the stub as GitHub's users would.
type seeder struct{ s *githubstub.Stub }

func (seeder) Writer() string { return "alice" }
func (seeder) Reader() string { return "mallory" }
func (d seeder) Issue(_ testing.TB, author, title, body string, labels ...string) int {
	return d.s.AddIssue(author, title, body, labels...)
}
func (d seeder) Comment(_ testing.TB, n int, author, body string) int64 {
	return d.s.AddComment(n, author, body)
}
func (d seeder) Branch(_ testing.TB, name string) string {
	d.s.Push(name, "6dcb09b5b57875f334f61aebed695e2e4193db5e")
	return "main"
}
func (d seeder) Checks(_ testing.TB, n int, state string) {
	switch state {
	case "pending":
		d.s.SetStatus(n, "ci/lint", "success")
		d.s.SetCheckRun(n, "test", "in_progress", "")
	case "failure":
		d.s.SetCheckRun(n, "test", "completed", "failure")
	default:
		d.s.SetCheckRun(n, "test", "completed", "success")
	}
}
func (d seeder) Review(_ testing.TB, n int, author, state string) {
	d.s.AddReview(n, author, strings.ToUpper(state))
}
func (d seeder) ReviewComment(_ testing.TB, n int, author, path string, line int, body string) {
	d.s.AddReviewComment(n, author, path, line, body)
}
func (d seeder) Merge(_ testing.TB, n int)                 { d.s.Merge(n) }
func (d seeder) CommentBody(_ testing.TB, id int64) string { return d.s.Comment(id) }
func (d seeder) Labels(_ testing.TB, n int) []string       { return d.s.Labels(n) }
func (d seeder) ChangedPath() (string, int)                { return "health.go", 12 }
func (d seeder) RateLimitNext(_ testing.TB, reset time.Time) bool {
	d.s.RateLimitNext(false, reset)
	return true
}

func open(t *testing.T) (*github.Forge, *githubstub.Stub) {
	t.Helper()
	s := githubstub.New(t, "team", "app")
	s.Token = "ghp_test"
	s.SetPermission("alice", "write")
	s.SetPermission("mallory", "read")
	f, err := github.New(forge.Config{Kind: forge.GitHub, URL: s.URL, Repo: "team/app", Token: "ghp_test"})
	require.NoError(t, err)
	return f, s
}

func TestInterface(t *testing.T) {
	t.Parallel()
	f, s := open(t)
	forgetest.Run(t, f, seeder{s})
	_, notModified := s.Requests()
	require.Positive(t, notModified, "repeated GETs are conditional")
}

func TestSecondaryRateLimitIsARateLimitError(t *testing.T) {
	t.Parallel()
	f, s := open(t)
	n := s.AddIssue("alice", "t", "b")
	s.RateLimitNext(true, time.Now().Add(3*time.Second))
	_, err := f.Issue(context.Background(), n)
	var rl *forge.RateLimitError
	require.True(t, errors.As(err, &rl), "%v", err)
	require.WithinDuration(t, time.Now().Add(3*time.Second), rl.Reset, 2*time.Second)
}

func TestBadTokenSaysSoWithoutTheToken(t *testing.T) {
	t.Parallel()
	s := githubstub.New(t, "team", "app")
	s.Token = "ghp_right"
	f, err := github.New(forge.Config{URL: s.URL, Repo: "team/app", Token: "ghp_wrong"})
	require.NoError(t, err)
	_, err = f.Issue(context.Background(), 1)
	require.ErrorContains(t, err, "Bad credentials")
	require.NotContains(t, err.Error(), "ghp_wrong")
}

func TestNewRefusesABadRepoOrURL(t *testing.T) {
	t.Parallel()
	_, err := github.New(forge.Config{Repo: "app"})
	require.ErrorContains(t, err, "owner/name")
	_, err = github.New(forge.Config{Repo: "team/app", URL: "ftp://x"})
	require.ErrorContains(t, err, "http")
}

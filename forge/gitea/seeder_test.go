package gitea_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/forge/gitea/giteatest"
)

// seeder acts on a real Gitea repository as its users would, for
// forgetest.Run.
type seeder struct {
	s      *giteatest.Server
	repo   string
	tokens map[string]string // user → API token
}

func (seeder) Writer() string { return "bob" }
func (seeder) Reader() string { return "eve" }

func (d seeder) api(t testing.TB, user, method, path string, body, out any) {
	t.Helper()
	require.NoError(t, d.s.API(method, "api/v1/repos/"+d.repo+"/"+path, d.tokens[user], body, out))
}

func (d seeder) Issue(t testing.TB, author, title, body string, labels ...string) int {
	var out struct {
		Number int `json:"number"`
	}
	d.api(t, author, http.MethodPost, "issues", map[string]any{"title": title, "body": body}, &out)
	if len(labels) > 0 {
		var ids []int64
		for _, name := range labels {
			var l struct {
				ID int64 `json:"id"`
			}
			d.api(t, "", http.MethodPost, "labels", map[string]any{"name": name, "color": "#00aabb"}, &l)
			ids = append(ids, l.ID)
		}
		d.api(t, "", http.MethodPost, fmt.Sprintf("issues/%d/labels", out.Number), map[string]any{"labels": ids}, nil)
	}
	return out.Number
}

func (d seeder) Comment(t testing.TB, n int, author, body string) int64 {
	var out struct {
		ID int64 `json:"id"`
	}
	d.api(t, author, http.MethodPost, fmt.Sprintf("issues/%d/comments", n), map[string]any{"body": body}, &out)
	return out.ID
}

func (d seeder) Branch(t testing.TB, name string) string {
	d.api(t, "", http.MethodPost, "contents/health.txt", map[string]any{
		"content": base64.StdEncoding.EncodeToString([]byte("one\ntwo\nthree\n")), "branch": "main",
		"new_branch": name, "message": "health: a file"}, nil)
	return "main"
}

func (d seeder) head(t testing.TB, n int) string {
	var pr struct {
		Head struct {
			Sha string `json:"sha"`
		} `json:"head"`
	}
	d.api(t, "", http.MethodGet, fmt.Sprintf("pulls/%d", n), nil, &pr)
	return pr.Head.Sha
}

func (d seeder) Checks(t testing.TB, n int, state string) {
	d.api(t, "", http.MethodPost, "statuses/"+d.head(t, n), map[string]any{"state": state, "context": "ci/test"}, nil)
}

func (d seeder) Review(t testing.TB, n int, author, state string) {
	event := map[string]string{"approved": "APPROVED", "changes_requested": "REQUEST_CHANGES"}[state]
	d.api(t, author, http.MethodPost, fmt.Sprintf("pulls/%d/reviews", n), map[string]any{"event": event, "body": state}, nil)
}

func (d seeder) ReviewComment(t testing.TB, n int, author, path string, line int, body string) {
	d.api(t, author, http.MethodPost, fmt.Sprintf("pulls/%d/reviews", n), map[string]any{"event": "COMMENT", "body": "",
		"comments": []map[string]any{{"path": path, "body": body, "new_position": line}}}, nil)
}

func (d seeder) Merge(t testing.TB, n int) {
	d.api(t, "", http.MethodPost, fmt.Sprintf("pulls/%d/merge", n), map[string]any{"Do": "merge"}, nil)
	// Gitea merges in a queue: the call returns before the pull request
	// reads as merged.
	require.Eventually(t, func() bool {
		var pr struct {
			Merged bool `json:"merged"`
		}
		return d.s.API(http.MethodGet, fmt.Sprintf("api/v1/repos/%s/pulls/%d", d.repo, n), "", nil, &pr) == nil && pr.Merged
	}, 30*time.Second, 50*time.Millisecond)
}

func (d seeder) CommentBody(t testing.TB, id int64) string {
	var out struct {
		Body string `json:"body"`
	}
	d.api(t, "", http.MethodGet, fmt.Sprintf("issues/comments/%d", id), nil, &out)
	return out.Body
}

func (d seeder) Labels(t testing.TB, n int) []string {
	var out []struct {
		Name string `json:"name"`
	}
	d.api(t, "", http.MethodGet, fmt.Sprintf("issues/%d/labels", n), nil, &out)
	names := []string{}
	for _, l := range out {
		names = append(names, l.Name)
	}
	return names
}

// RateLimitNext: a real Gitea cannot be made to refuse on cue.
func (seeder) RateLimitNext(testing.TB, time.Time) bool { return false }

func (seeder) ChangedPath() (string, int) { return "health.txt", 2 }

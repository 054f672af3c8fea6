package gitea_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/forge/gitea"
	"github.com/orchestra-tui/orchestra-tui/forge/gitea/giteatest"
)

// TestAgainstGitea runs every method of the Forge against one real Gitea
// server; the subtests share it because starting one costs seconds.
func TestAgainstGitea(t *testing.T) {
	s := giteatest.Start(t)
	repo := s.CreateRepo(t, "app")
	bobToken := s.CreateUser(t, "bob")
	s.CreateUser(t, "eve")
	s.AddCollaborator(t, repo, "bob", "write")
	f, err := gitea.New(forge.Config{Kind: forge.Gitea, URL: s.URL, Repo: repo, Token: s.Token})
	require.NoError(t, err)
	ctx := context.Background()

	newIssue := func(t *testing.T, title string, labels ...string) int {
		var out struct {
			Number int `json:"number"`
		}
		require.NoError(t, s.API(http.MethodPost, "api/v1/repos/"+repo+"/issues", "",
			map[string]any{"title": title, "body": "body of " + title}, &out))
		if len(labels) > 0 {
			require.NoError(t, f.SetLabels(ctx, out.Number, labels, nil))
		}
		return out.Number
	}

	t.Run("issues with the label are listed, others not", func(t *testing.T) {
		labelled := newIssue(t, "labelled", "orchestra", "harness:codex")
		plain := newIssue(t, "plain")
		list, err := f.Issues(ctx, "orchestra", time.Time{})
		require.NoError(t, err)
		var numbers []int
		for _, i := range list {
			numbers = append(numbers, i.Number)
		}
		require.Contains(t, numbers, labelled)
		require.NotContains(t, numbers, plain)
		i, err := f.Issue(ctx, labelled)
		require.NoError(t, err)
		require.Equal(t, "labelled", i.Title)
		require.Equal(t, "body of labelled", i.Body)
		require.Equal(t, s.Admin, i.Author)
		require.True(t, i.Open)
		require.ElementsMatch(t, []string{"orchestra", "harness:codex"}, i.Labels)
		require.Equal(t, fmt.Sprintf("%s%s/issues/%d", s.URL, repo, labelled), i.URL)

		later, err := f.Issues(ctx, "orchestra", time.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Empty(t, later, "since in the future lists nothing")
	})

	t.Run("labels are added, created and removed", func(t *testing.T) {
		n := newIssue(t, "labels", "orchestra")
		require.NoError(t, f.SetLabels(ctx, n, []string{"orchestra:running"}, nil))
		require.NoError(t, f.SetLabels(ctx, n, []string{"orchestra:review"}, []string{"orchestra:running", "orchestra:never-made"}))
		i, err := f.Issue(ctx, n)
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"orchestra", "orchestra:review"}, i.Labels)
	})

	t.Run("comments come oldest first, since filters, edits replace", func(t *testing.T) {
		n := newIssue(t, "comments")
		var ids []int64
		for k := range 3 {
			id, err := f.Comment(ctx, n, fmt.Sprintf("comment %d", k))
			require.NoError(t, err)
			ids = append(ids, id)
		}
		var bobs struct {
			ID int64 `json:"id"`
		}
		require.NoError(t, s.API(http.MethodPost, fmt.Sprintf("api/v1/repos/%s/issues/%d/comments", repo, n), bobToken,
			map[string]any{"body": "from bob"}, &bobs))
		list, err := f.Comments(ctx, n, time.Time{})
		require.NoError(t, err)
		require.Len(t, list, 4)
		for k, c := range list[:3] {
			require.Equal(t, ids[k], c.ID)
			require.Equal(t, fmt.Sprintf("comment %d", k), c.Body)
			require.Equal(t, s.Admin, c.Author)
			require.Equal(t, n, c.Number)
		}
		require.Equal(t, "bob", list[3].Author)
		require.Equal(t, bobs.ID, list[3].ID)

		none, err := f.Comments(ctx, n, time.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Empty(t, none)

		require.NoError(t, f.EditComment(ctx, ids[0], "status: running"))
		list, err = f.Comments(ctx, n, time.Time{})
		require.NoError(t, err)
		require.Equal(t, "status: running", list[0].Body)
	})

	t.Run("write access", func(t *testing.T) {
		for user, want := range map[string]bool{s.Admin: true, "bob": true, "eve": false, "nobody-here": false} {
			got, err := f.CanWrite(ctx, user)
			require.NoError(t, err, user)
			require.Equal(t, want, got, user)
		}
	})

	t.Run("a missing issue is ErrNotFound", func(t *testing.T) {
		_, err := f.Issue(ctx, 9999)
		require.True(t, errors.Is(err, forge.ErrNotFound), "%v", err)
	})

	t.Run("pull request: open twice, review, line comments, merge", func(t *testing.T) {
		require.NoError(t, s.API(http.MethodPost, "api/v1/repos/"+repo+"/contents/task.txt", "", map[string]any{
			"content": base64.StdEncoding.EncodeToString([]byte("one\ntwo\n")), "branch": "main",
			"new_branch": "task-1", "message": "task: a file"}, nil))
		pr, err := f.OpenPullRequest(ctx, forge.NewPullRequest{Title: "task", Body: "Closes #1", Head: "task-1", Base: "main"})
		require.NoError(t, err)
		require.True(t, pr.Open)
		require.Equal(t, "task-1", pr.Head)
		require.Equal(t, "main", pr.Base)
		require.Equal(t, "", pr.Review)
		again, err := f.OpenPullRequest(ctx, forge.NewPullRequest{Title: "task", Body: "Closes #1", Head: "task-1", Base: "main"})
		require.NoError(t, err)
		require.Equal(t, pr.Number, again.Number, "the open pull request is returned, not a second one")

		before := time.Now().Add(-time.Minute)
		require.NoError(t, s.API(http.MethodPost, fmt.Sprintf("api/v1/repos/%s/pulls/%d/reviews", repo, pr.Number), bobToken,
			map[string]any{"event": "REQUEST_CHANGES", "body": "see the line",
				"comments": []map[string]any{{"path": "task.txt", "body": "two is wrong", "new_position": 2}}}, nil))
		got, err := f.PullRequest(ctx, pr.Number)
		require.NoError(t, err)
		require.Equal(t, "changes_requested", got.Review)
		rc, err := f.ReviewComments(ctx, pr.Number, before)
		require.NoError(t, err)
		require.Len(t, rc, 1)
		require.Equal(t, "task.txt", rc[0].Path)
		require.Equal(t, 2, rc[0].Line)
		require.Equal(t, "bob", rc[0].Author)
		require.Equal(t, "two is wrong", rc[0].Body)
		later, err := f.ReviewComments(ctx, pr.Number, time.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Empty(t, later)

		require.NoError(t, s.API(http.MethodPost, fmt.Sprintf("api/v1/repos/%s/pulls/%d/merge", repo, pr.Number), "",
			map[string]any{"Do": "merge"}, nil))
		require.Eventually(t, func() bool {
			got, err = f.PullRequest(ctx, pr.Number)
			return err == nil && got.Merged
		}, 30*time.Second, 100*time.Millisecond, "merged")
		require.False(t, got.Open)
	})

	t.Run("a bad token is an error, not an empty list", func(t *testing.T) {
		bad, err := gitea.New(forge.Config{Kind: forge.Gitea, URL: s.URL, Repo: repo, Token: "not-a-token"})
		require.NoError(t, err)
		_, err = bad.Issues(ctx, "orchestra", time.Time{})
		require.Error(t, err)
		require.False(t, slices.Contains([]string{""}, err.Error()))
	})
}

func TestNewNamesAMissingURLOrABadRepo(t *testing.T) {
	_, err := gitea.New(forge.Config{Kind: forge.Gitea, Repo: "a/b"})
	require.ErrorContains(t, err, "url")
	_, err = gitea.New(forge.Config{Kind: forge.Gitea, URL: "http://127.0.0.1:1/", Repo: "ab"})
	require.ErrorContains(t, err, `"owner/name"`)
}

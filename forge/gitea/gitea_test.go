package gitea_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/forge"
	"github.com/orchestra-tui/orchestra-tui/forge/forgetest"
	"github.com/orchestra-tui/orchestra-tui/forge/gitea"
	"github.com/orchestra-tui/orchestra-tui/forge/gitea/giteatest"
)

// TestAgainstGitea runs every method of the Forge against one real Gitea
// server; the subtests share it because starting one costs seconds.
func TestAgainstGitea(t *testing.T) {
	s := giteatest.Start(t)
	repo := s.CreateRepo(t, "app")
	bobToken := s.CreateUser(t, "bob")
	eveToken := s.CreateUser(t, "eve")
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

	t.Run("forgetest", func(t *testing.T) {
		suite := s.CreateRepo(t, "suite")
		s.AddCollaborator(t, suite, "bob", "write")
		sf, err := gitea.New(forge.Config{Kind: forge.Gitea, URL: s.URL, Repo: suite, Token: s.Token})
		require.NoError(t, err)
		forgetest.Run(t, sf, seeder{s: s, repo: suite, tokens: map[string]string{"bob": bobToken, "eve": eveToken}})
	})

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

	t.Run("a bad token is an error, not an empty list", func(t *testing.T) {
		bad, err := gitea.New(forge.Config{Kind: forge.Gitea, URL: s.URL, Repo: repo, Token: "not-a-token"})
		require.NoError(t, err)
		_, err = bad.Issues(ctx, "orchestra", time.Time{})
		require.Error(t, err)
		require.NotErrorIs(t, err, forge.ErrNotFound)
	})

	// Last: Stop leaves no process of the server's behind.
	s.Stop()
	_, err = http.Get(s.URL + "api/v1/version")
	require.Error(t, err, "the server still answers after Stop")
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range cmdlines {
		b, _ := os.ReadFile(p)
		require.NotContains(t, string(b), s.WorkPath(), "process left after Stop: %s", p)
	}
}

func TestNewNamesAMissingURLOrABadRepo(t *testing.T) {
	_, err := gitea.New(forge.Config{Kind: forge.Gitea, Repo: "a/b"})
	require.ErrorContains(t, err, "url")
	_, err = gitea.New(forge.Config{Kind: forge.Gitea, URL: "http://127.0.0.1:1/", Repo: "ab"})
	require.ErrorContains(t, err, `"owner/name"`)
}

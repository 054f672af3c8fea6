// Package forgetest is the interface test of forge.Forge: every
// implementation (forge/github against its stub, forge/gitea against a
// real Gitea) runs the same Run, so they answer the engine alike. The
// forge-specific part is a Seeder, which acts on the forge the way its
// users would (opening issues, commenting, pushing, reviewing, merging).
package forgetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/forge"
)

// Seeder acts on the repository behind the Forge under test as its users
// would. Each method fails the test itself when it cannot.
type Seeder interface {
	// Writer is a user with write access who is not the Forge's own
	// account; Reader a user the forge knows without write access.
	Writer() string
	Reader() string
	// Issue opens an issue by author with labels; it returns the number.
	Issue(t testing.TB, author, title, body string, labels ...string) int
	// Comment comments on an issue or pull request as author.
	Comment(t testing.TB, number int, author, body string) int64
	// Branch pushes a branch with one commit over the base branch and
	// returns the base branch's name.
	Branch(t testing.TB, name string) (base string)
	// Checks sets a check of the pull request's head commit: "pending",
	// "success" or "failure".
	Checks(t testing.TB, number int, state string)
	// Review submits a review of the pull request's head by author:
	// "approved" or "changes_requested".
	Review(t testing.TB, number int, author, state string)
	// ReviewComment comments on line of path in the pull request's diff.
	ReviewComment(t testing.TB, number int, author, path string, line int, body string)
	// Merge merges the pull request.
	Merge(t testing.TB, number int)
	// CommentBody reads a comment's body back, for EditComment.
	CommentBody(t testing.TB, id int64) string
	// Labels reads an issue's labels back.
	Labels(t testing.TB, number int) []string
	// RateLimitNext makes the forge refuse the next request with a rate
	// limit that resets at reset; false when the forge cannot be made to
	// (a real server), and the rate-limit case is skipped.
	RateLimitNext(t testing.TB, reset time.Time) bool
	// ChangedPath is a file and line the pushed branch changes, for
	// review comments.
	ChangedPath() (path string, line int)
}

// Run tests every method of f against the repository s seeds. The
// subtests share the repository and run in order; the rate-limit case
// runs last, because a client may then hold its requests until the reset.
func Run(t *testing.T, f forge.Forge, s Seeder) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	start := time.Now().Add(-time.Minute)

	var task, other, pr int
	t.Run("Issues", func(t *testing.T) {
		task = s.Issue(t, s.Writer(), "Add a health endpoint", "GET /health answers 200.\n\n- [ ] it answers", "orchestra")
		other = s.Issue(t, s.Reader(), "Unlabelled", "not for the console")
		is, err := f.Issues(ctx, "orchestra", time.Time{})
		require.NoError(t, err)
		require.Len(t, is, 1, "only the labelled issue: %+v", is)
		i := is[0]
		require.Equal(t, task, i.Number)
		require.Equal(t, "Add a health endpoint", i.Title)
		require.Contains(t, i.Body, "GET /health answers 200.")
		require.Equal(t, s.Writer(), i.Author)
		require.Contains(t, i.Labels, "orchestra")
		require.True(t, i.Open)
		require.NotEmpty(t, i.URL)
		require.False(t, i.Updated.IsZero())

		later, err := f.Issues(ctx, "orchestra", time.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Empty(t, later, "nothing was updated after since")
	})
	t.Run("Issue", func(t *testing.T) {
		i, err := f.Issue(ctx, other)
		require.NoError(t, err)
		require.Equal(t, "Unlabelled", i.Title)
		require.Equal(t, s.Reader(), i.Author)
		_, err = f.Issue(ctx, 99999)
		require.ErrorIs(t, err, forge.ErrNotFound)
	})
	t.Run("CanWrite", func(t *testing.T) {
		ok, err := f.CanWrite(ctx, s.Writer())
		require.NoError(t, err)
		require.True(t, ok, "writer")
		ok, err = f.CanWrite(ctx, s.Reader())
		require.NoError(t, err)
		require.False(t, ok, "reader")
	})
	t.Run("Comments", func(t *testing.T) {
		a := s.Comment(t, task, s.Writer(), "use port 8080")
		b := s.Comment(t, task, s.Reader(), "and log it")
		cs, err := f.Comments(ctx, task, start)
		require.NoError(t, err)
		require.Len(t, cs, 2)
		require.Equal(t, []int64{a, b}, []int64{cs[0].ID, cs[1].ID}, "oldest first")
		require.Equal(t, "use port 8080", cs[0].Body)
		require.Equal(t, s.Writer(), cs[0].Author)
		require.Equal(t, task, cs[0].Number)
		require.False(t, cs[0].Created.IsZero())
		require.NotEmpty(t, cs[0].URL)
		none, err := f.Comments(ctx, task, time.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Empty(t, none)
		// Asked again unchanged (a conditional request where the forge
		// offers one), the answer is the same.
		again, err := f.Comments(ctx, task, start)
		require.NoError(t, err)
		require.Equal(t, cs, again)
		_, err = f.Comments(ctx, 99999, time.Time{})
		require.ErrorIs(t, err, forge.ErrNotFound)
	})
	t.Run("CommentAndEdit", func(t *testing.T) {
		id, err := f.Comment(ctx, task, "orchestra-tui: queued")
		require.NoError(t, err)
		require.NotZero(t, id)
		self, err := f.Self(ctx)
		require.NoError(t, err)
		require.NotEmpty(t, self)
		require.NotEqual(t, s.Writer(), self)
		cs, err := f.Comments(ctx, task, time.Time{})
		require.NoError(t, err)
		i := slices.IndexFunc(cs, func(c forge.Comment) bool { return c.ID == id })
		require.GreaterOrEqual(t, i, 0)
		require.Equal(t, self, cs[i].Author, "the forge's own comment is by Self")
		require.Equal(t, "orchestra-tui: queued", s.CommentBody(t, id))
		require.NoError(t, f.EditComment(ctx, id, "orchestra-tui: running"))
		require.Equal(t, "orchestra-tui: running", s.CommentBody(t, id))
		require.ErrorIs(t, f.EditComment(ctx, 987654321, "x"), forge.ErrNotFound)
	})
	t.Run("SetLabels", func(t *testing.T) {
		require.NoError(t, f.SetLabels(ctx, task, []string{"orchestra:running"}, nil))
		require.ElementsMatch(t, []string{"orchestra", "orchestra:running"}, s.Labels(t, task))
		require.NoError(t, f.SetLabels(ctx, task, []string{"orchestra:review"}, []string{"orchestra:running", "orchestra:absent"}))
		require.ElementsMatch(t, []string{"orchestra", "orchestra:review"}, s.Labels(t, task))
	})
	t.Run("OpenPullRequest", func(t *testing.T) {
		base := s.Branch(t, "orchestra/health")
		p, err := f.OpenPullRequest(ctx, forge.NewPullRequest{Title: "Add a health endpoint", Body: "Closes #1", Head: "orchestra/health", Base: base})
		require.NoError(t, err)
		require.NotZero(t, p.Number)
		require.True(t, p.Open)
		require.False(t, p.Merged)
		require.Equal(t, "orchestra/health", p.Head)
		require.Equal(t, base, p.Base)
		require.NotEmpty(t, p.URL)
		require.Empty(t, p.Review)
		pr = p.Number
		// Opening it again returns the same pull request.
		q, err := f.OpenPullRequest(ctx, forge.NewPullRequest{Title: "Add a health endpoint", Body: "again", Head: "orchestra/health", Base: base})
		require.NoError(t, err)
		require.Equal(t, pr, q.Number)
	})
	t.Run("PullRequestChecks", func(t *testing.T) {
		s.Checks(t, pr, "pending")
		p, err := f.PullRequest(ctx, pr)
		require.NoError(t, err)
		require.Equal(t, "pending", p.Checks)
		s.Checks(t, pr, "failure")
		p, err = f.PullRequest(ctx, pr)
		require.NoError(t, err)
		require.Equal(t, "failure", p.Checks)
		s.Checks(t, pr, "success")
		p, err = f.PullRequest(ctx, pr)
		require.NoError(t, err)
		require.Equal(t, "success", p.Checks)
		_, err = f.PullRequest(ctx, 99999)
		require.ErrorIs(t, err, forge.ErrNotFound)
	})
	t.Run("Review", func(t *testing.T) {
		s.Review(t, pr, s.Writer(), "changes_requested")
		p, err := f.PullRequest(ctx, pr)
		require.NoError(t, err)
		require.Equal(t, "changes_requested", p.Review)
		s.Review(t, pr, s.Writer(), "approved")
		p, err = f.PullRequest(ctx, pr)
		require.NoError(t, err)
		require.Equal(t, "approved", p.Review)
	})
	t.Run("ReviewComments", func(t *testing.T) {
		path, line := s.ChangedPath()
		s.ReviewComment(t, pr, s.Writer(), path, line, "name the handler")
		cs, err := f.ReviewComments(ctx, pr, start)
		require.NoError(t, err)
		require.NotEmpty(t, cs)
		c := cs[len(cs)-1]
		require.Equal(t, "name the handler", c.Body)
		require.Equal(t, path, c.Path)
		require.Equal(t, line, c.Line)
		require.Equal(t, s.Writer(), c.Author)
		require.Equal(t, pr, c.Number)
		none, err := f.ReviewComments(ctx, pr, time.Now().Add(time.Hour))
		require.NoError(t, err)
		require.Empty(t, none)
	})
	t.Run("Merged", func(t *testing.T) {
		s.Merge(t, pr)
		p, err := f.PullRequest(ctx, pr)
		require.NoError(t, err)
		require.True(t, p.Merged)
		require.False(t, p.Open)
		is, err := f.Issues(ctx, "", time.Time{})
		require.NoError(t, err)
		require.False(t, slices.ContainsFunc(is, func(i forge.Issue) bool { return i.Number == pr }), "a pull request is not an issue")
	})
	t.Run("RateLimit", func(t *testing.T) {
		reset := time.Now().Add(2 * time.Second).Truncate(time.Second)
		if !s.RateLimitNext(t, reset) {
			t.Skip("this forge cannot be made to refuse")
		}
		_, err := f.Issue(ctx, task)
		var rl *forge.RateLimitError
		require.True(t, errors.As(err, &rl), "a rate limit comes back as *forge.RateLimitError, got %v", err)
		require.WithinDuration(t, reset, rl.Reset, 2*time.Second)
	})
}

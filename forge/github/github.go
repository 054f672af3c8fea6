// Package github is forge.Forge for GitHub (and GitHub Enterprise), through
// github.com/google/go-github. The API root is configurable, so tests run
// it against a stub on 127.0.0.1 (githubstub). Rate limits come back as
// *forge.RateLimitError, a missing issue or pull request as
// forge.ErrNotFound; GETs are conditional (ETag), so polling an unchanged
// list costs GitHub nothing against the rate limit.
package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	gh "github.com/google/go-github/v74/github"

	"github.com/orchestra-tui/orchestra-tui/forge"
)

// DefaultURL is GitHub's public API root.
const DefaultURL = "https://api.github.com/"

// perPage is the largest page GitHub serves: one request for most lists.
const perPage = 100

// maxPages bounds a list walk, so a runaway repository cannot keep the
// poller paging forever.
const maxPages = 20

// Forge is one GitHub repository.
type Forge struct {
	c           *gh.Client
	owner, name string
}

var _ forge.Forge = (*Forge)(nil)

// New returns the forge for cfg.Repo ("owner/name") on cfg.URL (GitHub's
// when empty), authenticated with cfg.Token when it is set. The token
// lives only in the client's request headers.
func New(cfg forge.Config) (*Forge, error) {
	owner, name, ok := strings.Cut(strings.TrimSpace(cfg.Repo), "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("github: repository %q is not owner/name", cfg.Repo)
	}
	base := strings.TrimSpace(cfg.URL)
	if base == "" {
		base = DefaultURL
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("github: API URL %q is not an http(s) URL", cfg.URL)
	}
	c := gh.NewClient(&http.Client{Transport: newETagTransport(http.DefaultTransport), Timeout: 30 * time.Second})
	if cfg.Token != "" {
		c = c.WithAuthToken(cfg.Token)
	}
	c.BaseURL = u
	return &Forge{c: c, owner: owner, name: name}, nil
}

// Issues lists the open issues carrying label updated at or after since;
// pull requests, which GitHub lists as issues too, are left out.
func (f *Forge) Issues(ctx context.Context, label string, since time.Time) ([]forge.Issue, error) {
	opts := &gh.IssueListByRepoOptions{State: "open", Sort: "updated", Direction: "asc", Since: since, ListOptions: gh.ListOptions{PerPage: perPage}}
	if label != "" {
		opts.Labels = []string{label}
	}
	var out []forge.Issue
	for range maxPages {
		is, resp, err := f.c.Issues.ListByRepo(ctx, f.owner, f.name, opts)
		if err != nil {
			return nil, f.fail("list issues", err)
		}
		for _, i := range is {
			if !i.IsPullRequest() {
				out = append(out, issueOf(i))
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.ListOptions.Page = resp.NextPage
	}
	return out, nil
}

// Issue reads one issue, open or closed.
func (f *Forge) Issue(ctx context.Context, number int) (forge.Issue, error) {
	i, _, err := f.c.Issues.Get(ctx, f.owner, f.name, number)
	if err != nil {
		return forge.Issue{}, f.fail(fmt.Sprintf("read issue #%d", number), err)
	}
	return issueOf(i), nil
}

// Comments lists issue number's comments created or updated at or after
// since, oldest first.
func (f *Forge) Comments(ctx context.Context, number int, since time.Time) ([]forge.Comment, error) {
	opts := &gh.IssueListCommentsOptions{Sort: gh.Ptr("created"), Direction: gh.Ptr("asc"), ListOptions: gh.ListOptions{PerPage: perPage}}
	if !since.IsZero() {
		opts.Since = &since
	}
	var out []forge.Comment
	for range maxPages {
		cs, resp, err := f.c.Issues.ListComments(ctx, f.owner, f.name, number, opts)
		if err != nil {
			return nil, f.fail(fmt.Sprintf("list the comments of #%d", number), err)
		}
		for _, c := range cs {
			out = append(out, forge.Comment{ID: c.GetID(), Number: number, Author: c.GetUser().GetLogin(), Body: c.GetBody(),
				URL: c.GetHTMLURL(), Created: c.GetCreatedAt().Time, Updated: c.GetUpdatedAt().Time})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	sortComments(out)
	return out, nil
}

// CanWrite reports whether user has write, maintain or admin permission on
// the repository. A user GitHub does not know cannot write.
// Self is the login of the token's account.
func (f *Forge) Self(ctx context.Context) (string, error) {
	u, _, err := f.c.Users.Get(ctx, "")
	if err != nil {
		return "", f.fail("read the token's user", err)
	}
	return u.GetLogin(), nil
}

func (f *Forge) CanWrite(ctx context.Context, user string) (bool, error) {
	p, _, err := f.c.Repositories.GetPermissionLevel(ctx, f.owner, f.name, user)
	if err != nil {
		err = f.fail("read the permission of "+user, err)
		if errors.Is(err, forge.ErrNotFound) {
			return false, nil
		}
		return false, err
	}
	switch p.GetPermission() {
	case "admin", "maintain", "write":
		return true, nil
	}
	return false, nil
}

// Comment posts a comment on an issue or pull request.
func (f *Forge) Comment(ctx context.Context, number int, body string) (int64, error) {
	c, _, err := f.c.Issues.CreateComment(ctx, f.owner, f.name, number, &gh.IssueComment{Body: &body})
	if err != nil {
		return 0, f.fail(fmt.Sprintf("comment on #%d", number), err)
	}
	return c.GetID(), nil
}

// EditComment replaces a comment's body.
func (f *Forge) EditComment(ctx context.Context, id int64, body string) error {
	_, _, err := f.c.Issues.EditComment(ctx, f.owner, f.name, id, &gh.IssueComment{Body: &body})
	if err != nil {
		return f.fail(fmt.Sprintf("edit comment %d", id), err)
	}
	return nil
}

// SetLabels adds and removes labels on an issue. A label the repository
// lacks is created first, so its colour is ours rather than a default.
func (f *Forge) SetLabels(ctx context.Context, number int, add, remove []string) error {
	for _, l := range add {
		_, _, err := f.c.Issues.GetLabel(ctx, f.owner, f.name, l)
		if err = f.fail("read label "+l, err); errors.Is(err, forge.ErrNotFound) {
			_, _, err = f.c.Issues.CreateLabel(ctx, f.owner, f.name, &gh.Label{Name: gh.Ptr(l), Color: gh.Ptr(labelColour)})
			err = f.fail("create label "+l, err)
		}
		if err != nil {
			return err
		}
	}
	if len(add) > 0 {
		if _, _, err := f.c.Issues.AddLabelsToIssue(ctx, f.owner, f.name, number, add); err != nil {
			return f.fail(fmt.Sprintf("label #%d", number), err)
		}
	}
	for _, l := range remove {
		_, err := f.c.Issues.RemoveLabelForIssue(ctx, f.owner, f.name, number, l)
		// A label already gone is what was asked for.
		if err = f.fail(fmt.Sprintf("unlabel #%d", number), err); err != nil && !errors.Is(err, forge.ErrNotFound) {
			return err
		}
	}
	return nil
}

// labelColour is the colour of the labels the console creates.
const labelColour = "5319e7"

// OpenPullRequest returns the open pull request from pr.Head into pr.Base,
// opening it when there is none, so a retried finalise opens one.
func (f *Forge) OpenPullRequest(ctx context.Context, pr forge.NewPullRequest) (forge.PullRequest, error) {
	open, _, err := f.c.PullRequests.List(ctx, f.owner, f.name, &gh.PullRequestListOptions{
		State: "open", Head: f.owner + ":" + pr.Head, Base: pr.Base, ListOptions: gh.ListOptions{PerPage: perPage}})
	if err != nil {
		return forge.PullRequest{}, f.fail("list pull requests", err)
	}
	for _, p := range open {
		if p.GetHead().GetRef() == pr.Head && p.GetBase().GetRef() == pr.Base {
			return f.withChecks(ctx, p)
		}
	}
	p, _, err := f.c.PullRequests.Create(ctx, f.owner, f.name, &gh.NewPullRequest{
		Title: gh.Ptr(pr.Title), Body: gh.Ptr(pr.Body), Head: gh.Ptr(pr.Head), Base: gh.Ptr(pr.Base)})
	if err != nil {
		return forge.PullRequest{}, f.fail(fmt.Sprintf("open a pull request from %s into %s", pr.Head, pr.Base), err)
	}
	return f.withChecks(ctx, p)
}

// PullRequest reads a pull request with its head commit's checks and its
// latest decisive review.
func (f *Forge) PullRequest(ctx context.Context, number int) (forge.PullRequest, error) {
	p, _, err := f.c.PullRequests.Get(ctx, f.owner, f.name, number)
	if err != nil {
		return forge.PullRequest{}, f.fail(fmt.Sprintf("read pull request #%d", number), err)
	}
	return f.withChecks(ctx, p)
}

// withChecks completes a pull request with its checks and review.
func (f *Forge) withChecks(ctx context.Context, p *gh.PullRequest) (forge.PullRequest, error) {
	out := forge.PullRequest{Number: p.GetNumber(), URL: p.GetHTMLURL(), Open: p.GetState() == "open", Merged: p.GetMerged() || p.MergedAt != nil,
		Head: p.GetHead().GetRef(), Base: p.GetBase().GetRef()}
	sha := p.GetHead().GetSHA()
	if sha == "" {
		return out, nil
	}
	var err error
	if out.Checks, err = f.checks(ctx, sha); err != nil {
		return forge.PullRequest{}, err
	}
	if out.Review, err = f.review(ctx, out.Number, sha); err != nil {
		return forge.PullRequest{}, err
	}
	return out, nil
}

// checks folds the commit statuses and the check runs of sha into one
// word: any failure fails, else anything unfinished is pending, else
// success; "" when there are none.
func (f *Forge) checks(ctx context.Context, sha string) (string, error) {
	cs, _, err := f.c.Repositories.GetCombinedStatus(ctx, f.owner, f.name, sha, &gh.ListOptions{PerPage: perPage})
	if err != nil {
		return "", f.fail("read the status of "+short(sha), err)
	}
	var failed, pending, any bool
	if cs.GetTotalCount() > 0 || len(cs.Statuses) > 0 {
		any = true
		switch cs.GetState() {
		case "failure", "error":
			failed = true
		case "pending":
			pending = true
		}
	}
	runs, _, err := f.c.Checks.ListCheckRunsForRef(ctx, f.owner, f.name, sha, &gh.ListCheckRunsOptions{ListOptions: gh.ListOptions{PerPage: perPage}})
	if err != nil {
		return "", f.fail("read the check runs of "+short(sha), err)
	}
	for _, r := range runs.CheckRuns {
		any = true
		if r.GetStatus() != "completed" {
			pending = true
			continue
		}
		switch r.GetConclusion() {
		case "success", "neutral", "skipped":
		default: // failure, cancelled, timed_out, action_required, stale
			failed = true
		}
	}
	switch {
	case failed:
		return "failure", nil
	case pending:
		return "pending", nil
	case any:
		return "success", nil
	}
	return "", nil
}

// review is the latest decisive review of the head commit sha: a review of
// an older commit was answered by the push that followed it, so a task
// sent back by "changes requested" and approved again is not sent back
// by the same review twice. Each reviewer's latest review counts; one
// reviewer asking for changes outweighs approvals.
func (f *Forge) review(ctx context.Context, number int, sha string) (string, error) {
	opts := &gh.ListOptions{PerPage: perPage}
	latest := map[string]string{}
	for range maxPages {
		rs, resp, err := f.c.PullRequests.ListReviews(ctx, f.owner, f.name, number, opts)
		if err != nil {
			return "", f.fail(fmt.Sprintf("read the reviews of #%d", number), err)
		}
		for _, r := range rs {
			who := r.GetUser().GetLogin()
			switch r.GetState() {
			case "CHANGES_REQUESTED", "APPROVED":
				if r.GetCommitID() == sha {
					latest[who] = strings.ToLower(r.GetState())
				} else {
					delete(latest, who)
				}
			case "DISMISSED":
				delete(latest, who)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	out := ""
	for _, s := range latest {
		if s == "changes_requested" {
			return s, nil
		}
		out = s
	}
	return out, nil
}

// ReviewComments lists the line comments of pull request number created
// or updated at or after since, oldest first.
func (f *Forge) ReviewComments(ctx context.Context, number int, since time.Time) ([]forge.Comment, error) {
	opts := &gh.PullRequestListCommentsOptions{Sort: "created", Direction: "asc", Since: since, ListOptions: gh.ListOptions{PerPage: perPage}}
	var out []forge.Comment
	for range maxPages {
		cs, resp, err := f.c.PullRequests.ListComments(ctx, f.owner, f.name, number, opts)
		if err != nil {
			return nil, f.fail(fmt.Sprintf("list the review comments of #%d", number), err)
		}
		for _, c := range cs {
			line := c.GetLine()
			if line == 0 {
				line = c.GetOriginalLine() // the line is outdated: where it was
			}
			out = append(out, forge.Comment{ID: c.GetID(), Number: number, Author: c.GetUser().GetLogin(), Body: c.GetBody(),
				URL: c.GetHTMLURL(), Created: c.GetCreatedAt().Time, Updated: c.GetUpdatedAt().Time, Path: c.GetPath(), Line: line})
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	sortComments(out)
	return out, nil
}

func issueOf(i *gh.Issue) forge.Issue {
	out := forge.Issue{Number: i.GetNumber(), Title: i.GetTitle(), Body: i.GetBody(), Author: i.GetUser().GetLogin(),
		Open: i.GetState() == "open", URL: i.GetHTMLURL(), Updated: i.GetUpdatedAt().Time}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.GetName())
	}
	return out
}

func sortComments(cs []forge.Comment) {
	slices.SortStableFunc(cs, func(a, b forge.Comment) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return int(a.ID - b.ID)
	})
}

func short(sha string) string {
	if len(sha) > 10 {
		return sha[:10]
	}
	return sha
}

// fail says what failed in the operator's words and maps GitHub's answers
// onto the contract: rate limits to *forge.RateLimitError, 404 to
// forge.ErrNotFound. It returns nil for a nil err.
func (f *Forge) fail(what string, err error) error {
	if err == nil {
		return nil
	}
	if rl := rateLimit(err); rl != nil {
		return rl
	}
	var er *gh.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		if er.Response.StatusCode == http.StatusNotFound {
			return fmt.Errorf("github %s/%s: %s: %w", f.owner, f.name, what, forge.ErrNotFound)
		}
		msg := er.Message
		for _, e := range er.Errors {
			if e.Message != "" {
				msg += "; " + e.Message
			}
		}
		return fmt.Errorf("github %s/%s: %s: %d %s", f.owner, f.name, what, er.Response.StatusCode, strings.TrimSpace(msg))
	}
	return fmt.Errorf("github %s/%s: %s: %w", f.owner, f.name, what, err)
}

// rateLimit reads GitHub's primary limit (403 or 429 with
// X-RateLimit-Remaining: 0 and X-RateLimit-Reset) and its secondary one
// (Retry-After), or returns nil for any other error.
func rateLimit(err error) *forge.RateLimitError {
	var prim *gh.RateLimitError
	if errors.As(err, &prim) {
		return &forge.RateLimitError{Reset: prim.Rate.Reset.Time}
	}
	var sec *gh.AbuseRateLimitError
	if errors.As(err, &sec) {
		wait := time.Minute // GitHub's advice when it gives no Retry-After
		if sec.RetryAfter != nil {
			wait = *sec.RetryAfter
		}
		return &forge.RateLimitError{Reset: time.Now().Add(wait)}
	}
	var er *gh.ErrorResponse
	if !errors.As(err, &er) || er.Response == nil {
		return nil
	}
	h := er.Response.Header
	if c := er.Response.StatusCode; c != http.StatusTooManyRequests && c != http.StatusForbidden {
		return nil
	}
	if s := h.Get("Retry-After"); s != "" {
		if n, err := strconv.Atoi(s); err == nil {
			return &forge.RateLimitError{Reset: time.Now().Add(time.Duration(n) * time.Second)}
		}
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		if n, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return &forge.RateLimitError{Reset: time.Unix(n, 0)}
		}
	}
	if er.Response.StatusCode == http.StatusTooManyRequests {
		return &forge.RateLimitError{Reset: time.Now().Add(time.Minute)}
	}
	return nil
}

// Package gitea is forge.Forge for Gitea and Forgejo (Forgejo speaks
// Gitea's API), through code.gitea.io/sdk/gitea. It is tested against a
// real Gitea server (giteatest); Forgejo is not tested.
package gitea

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	sdk "code.gitea.io/sdk/gitea"

	"github.com/orchestra-tui/orchestra-tui/forge"
)

// pageSize is how many items one list request asks for; Gitea caps it at
// its MAX_RESPONSE_ITEMS (50 by default).
const pageSize = 50

// Forge is one repository on a Gitea or Forgejo server.
type Forge struct {
	url, owner, repo, token string
	http                    *http.Client
}

var _ forge.Forge = (*Forge)(nil)

// New returns the repository cfg names. The token is kept in memory only.
func New(cfg forge.Config) (*Forge, error) {
	if cfg.URL == "" {
		return nil, errors.New("gitea: [source] url is required (the server's address, e.g. https://git.example.org)")
	}
	owner, name, ok := strings.Cut(cfg.Repo, "/")
	if !ok || owner == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("gitea: [source] repo %q is not \"owner/name\"", cfg.Repo)
	}
	return &Forge{
		url: strings.TrimSuffix(cfg.URL, "/"), owner: owner, repo: name, token: cfg.Token,
		http: &http.Client{Transport: newConditional(http.DefaultTransport), Timeout: 30 * time.Second},
	}, nil
}

// client is an SDK client for one call: the SDK's context is per client,
// and a client is a few fields over the shared http.Client. The version
// check is off (it costs a request per client, and Forgejo's versions do
// not parse as Gitea's).
func (f *Forge) client(ctx context.Context) (*sdk.Client, error) {
	return sdk.NewClient(f.url, sdk.SetToken(f.token), sdk.SetHTTPClient(f.http),
		sdk.SetContext(ctx), sdk.SetGiteaVersion(""))
}

// wrap turns an SDK error into the forge package's: ErrNotFound for 404,
// RateLimitError for 429, and a message naming the server otherwise.
func (f *Forge) wrap(what string, resp *sdk.Response, err error) error {
	if err == nil {
		return nil
	}
	// Gitea 1.27 answers the comments of a missing issue with a 500
	// saying "issue does not exist": the same not-found to the caller.
	if strings.Contains(err.Error(), "does not exist") {
		return fmt.Errorf("gitea %s: %s: %w", f.url, what, forge.ErrNotFound)
	}
	if resp != nil && resp.Response != nil {
		switch resp.StatusCode {
		case http.StatusNotFound:
			return fmt.Errorf("gitea %s: %s: %w", f.url, what, forge.ErrNotFound)
		case http.StatusTooManyRequests:
			return &forge.RateLimitError{Reset: retryAfter(resp.Header.Get("Retry-After"), time.Now())}
		}
	}
	return fmt.Errorf("gitea %s: %s: %w", f.url, what, err)
}

// retryAfter reads a Retry-After header (seconds or an HTTP date); a
// missing one means a minute.
func retryAfter(h string, now time.Time) time.Time {
	if s, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && s >= 0 {
		return now.Add(time.Duration(s) * time.Second)
	}
	if t, err := http.ParseTime(h); err == nil {
		return t
	}
	return now.Add(time.Minute)
}

func (f *Forge) Issues(ctx context.Context, label string, since time.Time) ([]forge.Issue, error) {
	c, err := f.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []forge.Issue
	for page := 1; page > 0; {
		opt := sdk.ListIssueOption{ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize},
			State: sdk.StateOpen, Type: sdk.IssueTypeIssue, Since: since}
		if label != "" {
			opt.Labels = []string{label}
		}
		list, resp, err := c.ListRepoIssues(f.owner, f.repo, opt)
		if err != nil {
			return nil, f.wrap("list issues", resp, err)
		}
		for _, i := range list {
			out = append(out, issue(i))
		}
		page = next(resp, len(list))
	}
	return out, nil
}

func (f *Forge) Issue(ctx context.Context, number int) (forge.Issue, error) {
	c, err := f.client(ctx)
	if err != nil {
		return forge.Issue{}, err
	}
	i, resp, err := c.GetIssue(f.owner, f.repo, int64(number))
	if err != nil {
		return forge.Issue{}, f.wrap(fmt.Sprintf("issue #%d", number), resp, err)
	}
	return issue(i), nil
}

func (f *Forge) Comments(ctx context.Context, number int, since time.Time) ([]forge.Comment, error) {
	c, err := f.client(ctx)
	if err != nil {
		return nil, err
	}
	var out []forge.Comment
	for page := 1; page > 0; {
		list, resp, err := c.ListIssueComments(f.owner, f.repo, int64(number),
			sdk.ListIssueCommentOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}, Since: since})
		if err != nil {
			return nil, f.wrap(fmt.Sprintf("comments of #%d", number), resp, err)
		}
		for _, m := range list {
			out = append(out, forge.Comment{ID: m.ID, Number: number, Author: login(m.Poster),
				Body: m.Body, URL: m.HTMLURL, Created: m.Created, Updated: m.Updated})
		}
		page = next(resp, len(list))
	}
	sortComments(out)
	return out, nil
}

func (f *Forge) Self(ctx context.Context) (string, error) {
	c, err := f.client(ctx)
	if err != nil {
		return "", err
	}
	u, resp, err := c.GetMyUserInfo()
	if err != nil {
		return "", f.wrap("read the token's user", resp, err)
	}
	return u.UserName, nil
}

func (f *Forge) CanWrite(ctx context.Context, user string) (bool, error) {
	c, err := f.client(ctx)
	if err != nil {
		return false, err
	}
	p, resp, err := c.CollaboratorPermission(f.owner, f.repo, user)
	if err != nil {
		err = f.wrap("permission of "+user, resp, err)
		if errors.Is(err, forge.ErrNotFound) {
			return false, nil // no such user, or not one the repository knows
		}
		return false, err
	}
	switch p.Permission {
	case sdk.AccessModeWrite, sdk.AccessModeAdmin, sdk.AccessModeOwner:
		return true, nil
	}
	return false, nil
}

func (f *Forge) Comment(ctx context.Context, number int, body string) (int64, error) {
	c, err := f.client(ctx)
	if err != nil {
		return 0, err
	}
	m, resp, err := c.CreateIssueComment(f.owner, f.repo, int64(number), sdk.CreateIssueCommentOption{Body: body})
	if err != nil {
		return 0, f.wrap(fmt.Sprintf("comment on #%d", number), resp, err)
	}
	return m.ID, nil
}

func (f *Forge) EditComment(ctx context.Context, id int64, body string) error {
	c, err := f.client(ctx)
	if err != nil {
		return err
	}
	_, resp, err := c.EditIssueComment(f.owner, f.repo, id, sdk.EditIssueCommentOption{Body: body})
	return f.wrap(fmt.Sprintf("edit comment %d", id), resp, err)
}

func (f *Forge) SetLabels(ctx context.Context, number int, add, remove []string) error {
	c, err := f.client(ctx)
	if err != nil {
		return err
	}
	ids := map[string]int64{}
	for page := 1; page > 0; {
		list, resp, err := c.ListRepoLabels(f.owner, f.repo, sdk.ListLabelsOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}})
		if err != nil {
			return f.wrap("list labels", resp, err)
		}
		for _, l := range list {
			ids[l.Name] = l.ID
		}
		page = next(resp, len(list))
	}
	var addIDs []int64
	for _, name := range add {
		id, ok := ids[name]
		if !ok {
			l, resp, err := c.CreateLabel(f.owner, f.repo, sdk.CreateLabelOption{Name: name, Color: "#5319e7",
				Description: "kept by orchestra-tui"})
			if err != nil {
				return f.wrap("create label "+name, resp, err)
			}
			id = l.ID
		}
		addIDs = append(addIDs, id)
	}
	if len(addIDs) > 0 {
		if _, resp, err := c.AddIssueLabels(f.owner, f.repo, int64(number), sdk.IssueLabelsOption{Labels: addIDs}); err != nil {
			return f.wrap(fmt.Sprintf("label #%d", number), resp, err)
		}
	}
	for _, name := range remove {
		id, ok := ids[name]
		if !ok || slices.Contains(add, name) {
			continue
		}
		resp, err := c.DeleteIssueLabel(f.owner, f.repo, int64(number), id)
		if err = f.wrap(fmt.Sprintf("unlabel #%d", number), resp, err); err != nil && !errors.Is(err, forge.ErrNotFound) {
			return err
		}
	}
	return nil
}

func (f *Forge) OpenPullRequest(ctx context.Context, pr forge.NewPullRequest) (forge.PullRequest, error) {
	c, err := f.client(ctx)
	if err != nil {
		return forge.PullRequest{}, err
	}
	p, resp, err := c.CreatePullRequest(f.owner, f.repo, sdk.CreatePullRequestOption{
		Head: pr.Head, Base: pr.Base, Title: pr.Title, Body: pr.Body})
	if err != nil && resp != nil && resp.Response != nil && resp.StatusCode == http.StatusConflict {
		// Gitea answers 409 when a pull request for head and base is open.
		p, resp, err = c.GetPullRequestByBaseHead(f.owner, f.repo, pr.Base, pr.Head)
	}
	if err != nil {
		return forge.PullRequest{}, f.wrap("open pull request "+pr.Head+" → "+pr.Base, resp, err)
	}
	return f.PullRequest(ctx, int(p.Index))
}

func (f *Forge) PullRequest(ctx context.Context, number int) (forge.PullRequest, error) {
	c, err := f.client(ctx)
	if err != nil {
		return forge.PullRequest{}, err
	}
	p, resp, err := c.GetPullRequest(f.owner, f.repo, int64(number))
	if err != nil {
		return forge.PullRequest{}, f.wrap(fmt.Sprintf("pull request #%d", number), resp, err)
	}
	out := forge.PullRequest{Number: int(p.Index), URL: p.HTMLURL, Open: p.State == sdk.StateOpen, Merged: p.HasMerged}
	if p.Head != nil {
		out.Head = p.Head.Ref
	}
	if p.Base != nil {
		out.Base = p.Base.Ref
	}
	if p.Head != nil && p.Head.Sha != "" {
		st, resp, err := c.GetCombinedStatus(f.owner, f.repo, p.Head.Sha)
		if err != nil {
			return forge.PullRequest{}, f.wrap(fmt.Sprintf("checks of #%d", number), resp, err)
		}
		if st.TotalCount > 0 {
			switch st.State {
			case sdk.StatusSuccess:
				out.Checks = "success"
			case sdk.StatusPending:
				out.Checks = "pending"
			default:
				out.Checks = "failure"
			}
		}
	}
	reviews, err := f.reviews(c, number)
	if err != nil {
		return forge.PullRequest{}, err
	}
	for _, r := range reviews {
		if r.Dismissed {
			continue
		}
		switch r.State {
		case sdk.ReviewStateRequestChanges:
			out.Review = "changes_requested"
		case sdk.ReviewStateApproved:
			out.Review = "approved"
		}
	}
	return out, nil
}

func (f *Forge) reviews(c *sdk.Client, number int) ([]*sdk.PullReview, error) {
	var out []*sdk.PullReview
	for page := 1; page > 0; {
		list, resp, err := c.ListPullReviews(f.owner, f.repo, int64(number), sdk.ListPullReviewsOptions{ListOptions: sdk.ListOptions{Page: page, PageSize: pageSize}})
		if err != nil {
			return nil, f.wrap(fmt.Sprintf("reviews of #%d", number), resp, err)
		}
		out = append(out, list...)
		page = next(resp, len(list))
	}
	return out, nil
}

func (f *Forge) ReviewComments(ctx context.Context, number int, since time.Time) ([]forge.Comment, error) {
	c, err := f.client(ctx)
	if err != nil {
		return nil, err
	}
	reviews, err := f.reviews(c, number)
	if err != nil {
		return nil, err
	}
	var out []forge.Comment
	for _, r := range reviews {
		if r.CodeCommentsCount == 0 {
			continue
		}
		list, resp, err := c.ListPullReviewComments(f.owner, f.repo, int64(number), r.ID)
		if err != nil {
			return nil, f.wrap(fmt.Sprintf("review comments of #%d", number), resp, err)
		}
		for _, m := range list {
			if m.Updated.Before(since) && m.Created.Before(since) {
				continue
			}
			out = append(out, forge.Comment{ID: m.ID, Number: number, Author: login(m.Reviewer), Body: m.Body,
				URL: m.HTMLURL, Created: m.Created, Updated: m.Updated, Path: m.Path, Line: int(m.LineNum)})
		}
	}
	sortComments(out)
	return out, nil
}

// next is the page after resp's, or 0 when it was the last.
func next(resp *sdk.Response, n int) int {
	if resp == nil || resp.NextPage == 0 || n == 0 {
		return 0
	}
	return resp.NextPage
}

func issue(i *sdk.Issue) forge.Issue {
	out := forge.Issue{Number: int(i.Index), Title: i.Title, Body: i.Body, Author: login(i.Poster),
		Open: i.State == sdk.StateOpen, URL: i.HTMLURL, Updated: i.Updated}
	for _, l := range i.Labels {
		out.Labels = append(out.Labels, l.Name)
	}
	return out
}

func login(u *sdk.User) string {
	if u == nil {
		return ""
	}
	return u.UserName
}

// sortComments orders comments oldest first, ids breaking ties (Gitea's
// timestamps are whole seconds).
func sortComments(cs []forge.Comment) {
	sort.SliceStable(cs, func(i, j int) bool {
		if !cs[i].Created.Equal(cs[j].Created) {
			return cs[i].Created.Before(cs[j].Created)
		}
		return cs[i].ID < cs[j].ID
	})
}

// Package forge is the contract between the engine and a code forge (GitHub,
// Gitea, Forgejo): issues that become tasks, comments that become
// corrections, the task's status comment and labels, and the pull request
// that carries an approved task back. Each forge is a subpackage
// (forge/github, forge/gitea) implementing Forge; the engine sees only this
// package.
//
// Everything a forge returns is untrusted input: callers strip control and
// escape sequences (task.PlainText) and apply size limits before it is
// printed, stored or typed.
package forge

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Kind names a forge implementation.
type Kind string

// The forges this package knows. Forgejo speaks Gitea's API.
const (
	GitHub  Kind = "github"
	Gitea   Kind = "gitea"
	Forgejo Kind = "forgejo"
)

// Config says which forge and repository to talk to. Token is read from a
// file or the environment by the caller and is never stored, logged or
// passed to a session.
type Config struct {
	Kind  Kind
	URL   string // API root; empty means the forge's public default (GitHub)
	Repo  string // "owner/name"
	Token string
}

// Issue is an issue as a task source sees it.
type Issue struct {
	Number  int
	Title   string
	Body    string
	Author  string
	Labels  []string
	Open    bool
	URL     string
	Updated time.Time
}

// Comment is a comment on an issue or pull request. Path and Line are set
// for a review comment on a line of a pull request's diff.
type Comment struct {
	ID      int64
	Number  int // the issue's or pull request's number
	Author  string
	Body    string
	URL     string
	Created time.Time
	Updated time.Time
	Path    string
	Line    int
}

// NewPullRequest is what the finalise step asks a forge to open.
type NewPullRequest struct {
	Title string
	Body  string
	Head  string // the task's branch, pushed before the call
	Base  string
}

// PullRequest is a pull request's state as the task row shows it.
type PullRequest struct {
	Number int
	URL    string
	Open   bool
	Merged bool
	Head   string
	Base   string
	// Checks is the combined status of the head commit's checks:
	// "pending", "success", "failure", or "" when it has none.
	Checks string
	// Review is the latest decisive review: "changes_requested",
	// "approved", or "".
	Review string
}

// Forge is one repository on one forge.
type Forge interface {
	// Issues lists the open issues carrying label, updated at or after
	// since (the zero time lists all).
	Issues(ctx context.Context, label string, since time.Time) ([]Issue, error)
	// Issue reads one issue, open or closed.
	Issue(ctx context.Context, number int) (Issue, error)
	// Comments lists an issue's comments created or updated at or after
	// since, oldest first.
	Comments(ctx context.Context, number int, since time.Time) ([]Comment, error)
	// Self is the login of the account the token belongs to: the author
	// of the status comments the engine posts.
	Self(ctx context.Context) (string, error)
	// CanWrite reports whether user may push to the repository (the
	// default allow list for tasks and corrections).
	CanWrite(ctx context.Context, user string) (bool, error)
	// Comment posts a comment on an issue or pull request and returns its id.
	Comment(ctx context.Context, number int, body string) (int64, error)
	// EditComment replaces a comment's body (the task's status comment).
	EditComment(ctx context.Context, id int64, body string) error
	// SetLabels adds and removes labels on an issue, creating missing ones.
	SetLabels(ctx context.Context, number int, add, remove []string) error
	// OpenPullRequest opens a pull request, or returns the open one for
	// the same head and base.
	OpenPullRequest(ctx context.Context, pr NewPullRequest) (PullRequest, error)
	// PullRequest reads a pull request with its checks and review state.
	PullRequest(ctx context.Context, number int) (PullRequest, error)
	// ReviewComments lists the line comments of a pull request's reviews
	// created or updated at or after since, oldest first.
	ReviewComments(ctx context.Context, number int, since time.Time) ([]Comment, error)
}

// RateLimitError says the forge refused for now; retry after Reset.
type RateLimitError struct {
	Reset time.Time
}

func (e *RateLimitError) Error() string {
	return fmt.Sprintf("forge rate limit: retry after %s", e.Reset.UTC().Format(time.RFC3339))
}

// ErrNotFound is returned (wrapped) for an issue, comment or pull request
// the forge does not have.
var ErrNotFound = errors.New("forge: not found")

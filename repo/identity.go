package repo

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
)

// Identity names a repository across machines: where it came from and the
// commit its history starts at. A handoff carries it so that resume can
// refuse a file that belongs to a different repository.
type Identity struct {
	// Origin is the first URL of the "origin" remote, without credentials;
	// empty when there is no such remote.
	Origin string `json:"origin,omitempty"`
	// Root is the root commit reached from HEAD; with several (merged
	// histories) the lexicographically smallest, so every clone agrees.
	Root string `json:"root_commit"`
	// Head is the full sha of HEAD when the identity was read.
	Head string `json:"head"`
}

// Identity reads the repository's identity.
func (r *Repo) Identity() (Identity, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	head, err := r.head()
	if err != nil {
		return Identity{}, err
	}
	origin, err := r.origin()
	if err != nil {
		return Identity{}, err
	}
	root, err := r.rootCommitFrom(head)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Origin: origin, Root: root, Head: head}, nil
}

func (r *Repo) origin() (string, error) {
	rem, err := r.g.Remote("origin")
	if errors.Is(err, git.ErrRemoteNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read remote origin in %s: %w", r.Root, err)
	}
	urls := rem.Config().URLs
	if len(urls) == 0 {
		return "", nil
	}
	return redactURL(urls[0]), nil
}

// redactURL drops credentials from an http(s) URL: an identity is written
// into handoff files and events, and a token in a remote URL must not
// travel with them. scp-like ssh addresses carry no secret and pass as is.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil || (u.Scheme != "http" && u.Scheme != "https") {
		return raw
	}
	u.User = nil
	return u.String()
}

// rootCommitFrom walks history from head and returns the smallest parentless
// commit. In a shallow clone a commit on the shallow boundary (its parents
// were never fetched) counts as a root, so a shallow checkout still has an
// identity. Callers hold r.mu.
func (r *Repo) rootCommitFrom(head string) (string, error) {
	if r.rootFor == head && r.rootCommit != "" {
		return r.rootCommit, nil
	}
	shallow := map[plumbing.Hash]bool{}
	if list, err := r.g.Storer.Shallow(); err == nil {
		for _, h := range list {
			shallow[h] = true
		}
	}
	var best string
	err := r.objects(func() error {
		best = ""
		seen := map[plumbing.Hash]bool{}
		stack := []plumbing.Hash{plumbing.NewHash(head)}
		for len(stack) > 0 {
			h := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if seen[h] {
				continue
			}
			seen[h] = true
			c, err := r.g.CommitObject(h)
			if err != nil {
				return fmt.Errorf("read commit %s: %w", h, err)
			}
			if len(c.ParentHashes) == 0 || shallow[h] {
				if best == "" || h.String() < best {
					best = h.String()
				}
				continue
			}
			stack = append(stack, c.ParentHashes...)
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("find the root commit from %s in %s: %w", head, r.Root, err)
	}
	r.rootFor, r.rootCommit = head, best
	return best, nil
}

package repo

import (
	"fmt"
	"net/url"
	"strings"
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
	head, err := r.Head()
	if err != nil {
		return Identity{}, err
	}
	origin, err := r.origin()
	if err != nil {
		return Identity{}, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	root, err := r.rootCommitFrom(head)
	if err != nil {
		return Identity{}, err
	}
	return Identity{Origin: origin, Root: root, Head: head}, nil
}

// origin reads the first URL of the "origin" remote from the repository's
// config, as written (no insteadOf rewriting): the identity names where
// the history came from, not how this machine reaches it.
func (r *Repo) origin() (string, error) {
	out, err := run(r.Root, "config", "--get-all", "remote.origin.url")
	if exitCode(err) == 1 {
		return "", nil // no origin remote, or one without a URL
	}
	if err != nil {
		return "", fmt.Errorf("read remote origin in %s: %w", r.Root, err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return redactURL(first), nil
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

// rootCommitFrom lists the parentless commits reachable from head and
// returns the smallest. In a shallow clone git treats a commit on the
// shallow boundary (its parents were never fetched) as parentless, so a
// shallow checkout still has an identity. Callers hold r.mu.
func (r *Repo) rootCommitFrom(head string) (string, error) {
	if r.rootFor == head && r.rootCommit != "" {
		return r.rootCommit, nil
	}
	out, err := run(r.Root, "rev-list", "--max-parents=0", head, "--")
	if err != nil {
		return "", fmt.Errorf("find the root commit from %s in %s: %w", head, r.Root, err)
	}
	var best string
	for _, h := range strings.Fields(string(out)) {
		if best == "" || h < best {
			best = h
		}
	}
	if best == "" {
		return "", fmt.Errorf("find the root commit from %s in %s: git rev-list listed none", head, r.Root)
	}
	r.rootFor, r.rootCommit = head, best
	return best, nil
}

package handoff

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Relativize returns paths relative to root (the task's worktree or the
// repository root) with forward slashes, as a handoff carries them. A path
// outside root is returned unchanged, so Parse (and Marshal's self-check)
// refuses it by name rather than it being silently altered.
func Relativize(root string, paths []string) []string {
	if paths == nil {
		return nil
	}
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = relativize(root, p)
	}
	return out
}

func relativize(root, p string) string {
	if !filepath.IsAbs(p) {
		return filepath.ToSlash(filepath.Clean(p))
	}
	rel, err := filepath.Rel(root, p)
	if err != nil || !filepath.IsLocal(rel) {
		return p
	}
	return filepath.ToSlash(rel)
}

// RelativizeText removes root from free text such as a pane's last screen or
// an artifact's content, so "<root>/calc.go" reads "calc.go". Rewriting an
// artifact changes its bytes: build it again with NewArtifact.
func RelativizeText(root, text string) string {
	root = strings.TrimRight(root, `/\`)
	if root == "" {
		return text
	}
	text = strings.ReplaceAll(text, root+"/", "")
	if filepath.Separator != '/' {
		text = strings.ReplaceAll(text, root+string(filepath.Separator), "")
	}
	return text
}

// NewArtifact builds the handoff form of a sealed artifact, with its sha256.
func NewArtifact(p task.Phase, content []byte) Artifact {
	sum := sha256.Sum256(content)
	return Artifact{Phase: p, SHA256: hex.EncodeToString(sum[:]), Content: string(content)}
}

// StripCredentials removes the user part of an HTTP(S) origin URL and any
// password elsewhere, so a token in a remote URL never travels in a handoff.
// An scp-like address (git@host:owner/repo) is returned unchanged.
func StripCredentials(origin string) string {
	if !hasCredentials(origin) {
		return origin
	}
	u, err := url.Parse(origin)
	if err != nil {
		return origin
	}
	if u.Scheme == "http" || u.Scheme == "https" {
		u.User = nil
	} else {
		u.User = url.User(u.User.Username())
	}
	return u.String()
}

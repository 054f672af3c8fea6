package handoff

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// git runs git in dir and returns its standard output. The repo package
// answers most questions; these few (a diff between two commits, creating
// and deleting a branch, ancestry) are all resume needs beside it. It never
// prompts.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// diffNames lists the files that differ between the merge base of base and
// head, and head: what the task's branch changed.
func diffNames(dir, base, head string) ([]string, error) {
	out, err := git(dir, "diff", "--name-only", "-z", "--no-renames", base+"..."+head)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// isAncestor reports whether commit a is an ancestor of (or equal to) b.
func isAncestor(dir, a, b string) bool {
	_, err := git(dir, "merge-base", "--is-ancestor", a, b)
	return err == nil
}

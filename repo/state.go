package repo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// State is the git state of a task's worktree as the console read it from
// git, for the brief's "Verified git state" section. It mirrors
// brief.GitState field for field so a caller converts with a plain
// conversion.
type State struct {
	// Branch is the checked-out branch, empty when HEAD is detached.
	Branch string
	// Head is the full sha of HEAD, empty before the first commit.
	Head string
	// Base is the full sha the base revision resolved to; empty when no
	// base was given.
	Base string
	// Dirty lists paths with uncommitted changes, staged or not, and
	// untracked files (excluded files are not listed), sorted.
	Dirty []string
	// Ahead and Behind count commits on HEAD not on Base and the reverse.
	Ahead, Behind int
	// Changed lists files that differ from the merge base of HEAD and Base:
	// committed, uncommitted and untracked, sorted and unique.
	Changed []string
}

// statusArgs reads branch, HEAD and dirty paths in one process. Porcelain
// v2 with --branch saves the two extra commands v1 would need; -uall lists
// untracked files one by one (not as "dir/"), and --no-renames keeps one
// path per entry so a rename shows as the two paths it touches.
var statusArgs = []string{"status", "--porcelain=v2", "--branch", "-z", "--untracked-files=all", "--no-renames"}

// status is the parsed output of statusArgs.
type status struct {
	branch, head string
	dirty        []string // every path status lists, sorted
	untracked    []string // the "?" entries alone
}

func readStatus(dir string) (status, error) {
	out, err := run(dir, statusArgs...)
	if err != nil {
		return status{}, err
	}
	st, err := parseStatus(out)
	if err != nil {
		return status{}, fmt.Errorf("git status in %s: %w", dir, err)
	}
	return st, nil
}

// parseStatus parses `git status --porcelain=v2 --branch -z`.
func parseStatus(out []byte) (status, error) {
	var st status
	fields := splitNUL(out)
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		switch {
		case strings.HasPrefix(f, "# branch.oid "):
			if oid := strings.TrimPrefix(f, "# branch.oid "); oid != "(initial)" {
				st.head = oid
			}
		case strings.HasPrefix(f, "# branch.head "):
			if b := strings.TrimPrefix(f, "# branch.head "); b != "(detached)" {
				st.branch = b
			}
		case strings.HasPrefix(f, "#"):
			// Other headers (upstream, ahead/behind of upstream) are not ours.
		case strings.HasPrefix(f, "1 "):
			p, err := nthField(f, 8)
			if err != nil {
				return st, err
			}
			st.dirty = append(st.dirty, p)
		case strings.HasPrefix(f, "2 "):
			// Only with rename detection on; the original path follows.
			p, err := nthField(f, 9)
			if err != nil {
				return st, err
			}
			st.dirty = append(st.dirty, p)
			if i+1 < len(fields) {
				i++
				st.dirty = append(st.dirty, fields[i])
			}
		case strings.HasPrefix(f, "u "):
			p, err := nthField(f, 10)
			if err != nil {
				return st, err
			}
			st.dirty = append(st.dirty, p)
		case strings.HasPrefix(f, "? "):
			p := f[2:]
			st.dirty = append(st.dirty, p)
			st.untracked = append(st.untracked, p)
		case strings.HasPrefix(f, "! "):
			// Ignored files are never dirty.
		default:
			return st, fmt.Errorf("unexpected status entry %q", f)
		}
	}
	st.dirty = sortedUnique(st.dirty)
	return st, nil
}

// nthField returns what follows the first n space-separated fields; the
// path is last and may itself contain spaces.
func nthField(entry string, n int) (string, error) {
	parts := strings.SplitN(entry, " ", n+1)
	if len(parts) != n+1 || parts[n] == "" {
		return "", fmt.Errorf("malformed status entry %q", entry)
	}
	return parts[n], nil
}

// VerifiedState reads the state of the worktree at dir (or any directory
// inside it) against base, a revision such as a branch name or sha. An empty
// base leaves Base, Ahead, Behind empty and Changed equal to the dirty paths.
func VerifiedState(dir, base string) (State, error) {
	st, err := readStatus(dir)
	if err != nil {
		return State{}, fmt.Errorf("read verified state: %w", err)
	}
	s := State{Branch: st.branch, Head: st.head, Dirty: st.dirty}
	if base == "" {
		s.Changed = append([]string(nil), st.dirty...)
		return s, nil
	}
	if s.Base, err = resolveCommit(dir, base); err != nil {
		return State{}, fmt.Errorf("read verified state: %w", err)
	}
	if s.Head != "" {
		if s.Ahead, s.Behind, err = aheadBehind(dir, s.Base); err != nil {
			return State{}, fmt.Errorf("read verified state: %w", err)
		}
	}
	if s.Changed, err = changedSince(dir, s.Base, st); err != nil {
		return State{}, fmt.Errorf("read verified state: %w", err)
	}
	return s, nil
}

// Changed lists the files of the worktree at dir that differ from the merge
// base of HEAD and base: committed since, uncommitted and untracked, sorted
// and unique.
func Changed(dir, base string) ([]string, error) {
	st, err := readStatus(dir)
	if err != nil {
		return nil, fmt.Errorf("list changed files: %w", err)
	}
	sha, err := resolveCommit(dir, base)
	if err != nil {
		return nil, fmt.Errorf("list changed files: %w", err)
	}
	files, err := changedSince(dir, sha, st)
	if err != nil {
		return nil, fmt.Errorf("list changed files: %w", err)
	}
	return files, nil
}

// changedSince adds the tracked files that differ between the merge base
// and the working tree to the untracked files status already found.
func changedSince(dir, baseSHA string, st status) ([]string, error) {
	files := append([]string(nil), st.untracked...)
	if st.head == "" {
		return sortedUnique(append(files, st.dirty...)), nil
	}
	// --merge-base compares the working tree (and so staged and unstaged
	// edits too) with merge-base(base, HEAD): a base that moved on after the
	// branch was cut does not make its own changes look like ours.
	out, err := run(dir, "diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--merge-base", baseSHA, "--")
	if err != nil {
		return nil, err
	}
	return sortedUnique(append(files, splitNUL(out)...)), nil
}

// resolveCommit returns the full sha of the commit rev names.
func resolveCommit(dir, rev string) (string, error) {
	if err := checkArg("base revision", rev); err != nil {
		return "", fmt.Errorf("in %s: %w", dir, err)
	}
	sha, err := runLine(dir, "rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("base %q is not a commit in %s: %w", rev, dir, err)
	}
	return sha, nil
}

func aheadBehind(dir, baseSHA string) (ahead, behind int, err error) {
	line, err := runLine(dir, "rev-list", "--left-right", "--count", "HEAD..."+baseSHA, "--")
	if err != nil {
		return 0, 0, err
	}
	l, r, ok := strings.Cut(line, "\t")
	if ahead, err = strconv.Atoi(l); err == nil && ok {
		behind, err = strconv.Atoi(r)
	}
	if err != nil || !ok {
		return 0, 0, fmt.Errorf("git rev-list --left-right --count in %s: unexpected output %q", dir, line)
	}
	return ahead, behind, nil
}

func sortedUnique(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	sort.Strings(s)
	out := s[:1]
	for _, v := range s[1:] {
		if v != out[len(out)-1] {
			out = append(out, v)
		}
	}
	return out
}

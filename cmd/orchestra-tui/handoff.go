package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/handoff"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/jail"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

const handoffUsage = "usage: orchestra-tui handoff export TASK [--out FILE] [-C DIR]"

// handoffCmd writes a task's portable handoff file.
func handoffCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprintln(stdout, handoffUsage)
		return 0
	}
	if len(args) == 0 || args[0] != "export" {
		fmt.Fprintln(stderr, handoffUsage)
		return 2
	}
	fs := newFlags("handoff export", strings.TrimPrefix(handoffUsage, "usage: "), stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	out := fs.String("out", "handoff.json", "write the handoff to `FILE`")
	// TASK may come before or after the flags.
	var ref []string
	rest := args[1:]
	for {
		if err := fs.Parse(rest); err != nil {
			return parseStatus(err)
		}
		if fs.NArg() == 0 {
			break
		}
		ref, rest = append(ref, fs.Arg(0)), fs.Args()[1:]
	}
	if len(ref) != 1 {
		fmt.Fprintln(stderr, handoffUsage)
		return 2
	}
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	st, err := openExistingStore(context.Background(), r)
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	t, err := resolveTask(ctx, st, ref[0])
	if err != nil {
		return fail(stderr, err)
	}
	sha, committed, err := handoff.CommitWorktree(r, t)
	if err != nil {
		return fail(stderr, err)
	}
	d, err := handoff.Export(ctx, st, r, t.ID, "orchestra-tui "+version())
	if err != nil {
		return fail(stderr, err)
	}
	data, err := handoff.Marshal(d)
	if err != nil {
		return fail(stderr, err)
	}
	path, err := filepath.Abs(*out)
	if err != nil {
		return fail(stderr, err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil { // it holds the decisions and artifacts
		return fail(stderr, fmt.Errorf("write the handoff: %w", err))
	}
	if t.State == task.StateLeased || t.State == task.StateRunning {
		fmt.Fprintf(stdout, "Note: task %s is still %s here; the handoff captures it as it stands now.\n", t.ID, t.State)
	}
	if committed {
		fmt.Fprintf(stdout, "Committed the worktree's uncommitted work to %s as %s.\n", t.Branch, shortSHA(sha))
	}
	fmt.Fprintf(stdout, "Wrote the handoff of task %s (%s) to %s (%d bytes).\n", t.ID, headless.Printable(t.Title), path, len(data))
	fmt.Fprint(stdout, describeHandoff(d))
	if d.Repo.BranchHead != "" {
		remote := "<remote>"
		if d.Repo.Origin != "" {
			remote = "origin"
		}
		fmt.Fprintf(stdout, "The other checkout needs branch %s: push it first (git push %s %s).\n", d.Repo.Branch, remote, d.Repo.Branch)
	}
	return 0
}

// resolveTask finds the task ref names among the store's tasks.
func resolveTask(ctx context.Context, st store.Store, ref string) (task.Task, error) {
	ts, err := st.TaskList(ctx, store.TaskListParams{})
	if err != nil {
		return task.Task{}, err
	}
	ids := make([]task.ID, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	id, err := coord.ResolveID(ids, ref)
	if err != nil {
		return task.Task{}, err
	}
	return st.TaskGet(ctx, id)
}

// describeHandoff summarises a document in a few lines for the operator.
func describeHandoff(d handoff.Document) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "  phase reached: %s of %s\n", d.PhaseReached, d.Task.Pipeline)
	models := map[string]bool{}
	for _, s := range d.Sessions {
		m := s.Harness
		if s.Model != "" {
			m += " " + s.Model
		}
		models[headless.Printable(m)] = true
	}
	names := make([]string, 0, len(models))
	for m := range models {
		names = append(names, m)
	}
	sort.Strings(names)
	fmt.Fprintf(&sb, "  sessions: %d (%s)\n", len(d.Sessions), strings.Join(names, ", "))
	if d.Verdict != nil {
		fmt.Fprintf(&sb, "  verdict: %s\n", headless.Printable(d.Verdict.Line))
	}
	if len(d.FilesChanged) > 0 {
		fmt.Fprintf(&sb, "  files changed: %s\n", headless.Printable(strings.Join(d.FilesChanged, ", ")))
	}
	fmt.Fprintf(&sb, "  artifacts: %d, decisions: %d, dead ends: %d\n", len(d.Artifacts), len(d.Decisions), len(d.DeadEnds))
	head := "none yet"
	if d.Repo.BranchHead != "" {
		head = shortSHA(d.Repo.BranchHead)
	}
	fmt.Fprintf(&sb, "  branch: %s at %s, base %s, root %s\n", headless.Printable(d.Repo.Branch), head, shortSHA(d.Repo.BaseCommit), shortSHA(d.Repo.RootCommit))
	return sb.String()
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}

// resumeInto creates the task a handoff file describes in the opened
// repository's store, before the coordinator runs and picks it up.
func resumeInto(o *coord.Opened, file, harness, model string, stdout, stderr io.Writer) int {
	d, err := readHandoff(file)
	if err != nil {
		return fail(stderr, err)
	}
	if harness != "" {
		if _, ok := o.Config.Harness[harness]; !ok {
			var known []string
			for n := range o.Config.Harness {
				known = append(known, n)
			}
			sort.Strings(known)
			return fail(stderr, fmt.Errorf("resume %s: no harness named %q is configured (known: %s)", file, harness, strings.Join(known, ", ")))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	t, err := handoff.Resume(ctx, o.Store, o.Repo, d, harness, model, time.Now(), o.Key())
	if err != nil {
		return fail(stderr, fmt.Errorf("resume %s: %w", file, err))
	}
	m := t.Model
	if m == "" {
		m = "its default"
	}
	// Every field of the file may hold escape sequences (it came from
	// another machine); what is printed of it goes through Printable.
	fmt.Fprintf(stdout, "Resumed task %s as %s (%s): phase %s on branch %s, harness %s, model %s.\n",
		headless.Printable(string(d.Task.ID)), t.ID, headless.Printable(t.Title), t.Phase, headless.Printable(t.Branch),
		headless.Printable(orDefault(t.Harness, coord.DefaultHarness)), headless.Printable(m))
	fmt.Fprint(stdout, describeHandoff(d))
	return 0
}

// readHandoff reads and parses a handoff file, refusing one too large to be
// a handoff before reading it.
func readHandoff(file string) (handoff.Document, error) {
	fi, err := os.Stat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return handoff.Document{}, fmt.Errorf("resume: %s does not exist; write one with `orchestra-tui handoff export TASK --out FILE`", file)
	}
	if err != nil {
		return handoff.Document{}, fmt.Errorf("resume: %w", err)
	}
	if fi.Size() > handoff.MaxBytes {
		return handoff.Document{}, fmt.Errorf("resume %s: %d bytes is larger than any handoff file (%d at most)", file, fi.Size(), handoff.MaxBytes)
	}
	// Stat follows what the operator named; a FIFO or a device reports a
	// size of 0, so the read itself is bounded and refuses them at once.
	data, err := jail.ReadRegular(file, handoff.MaxBytes)
	if err != nil {
		return handoff.Document{}, fmt.Errorf("resume: %w; a handoff is a regular file written by `orchestra-tui handoff export`", err)
	}
	d, err := handoff.Parse(data)
	if err != nil {
		return handoff.Document{}, fmt.Errorf("resume %s: nothing was created: %w", file, err)
	}
	return d, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// pruneCmd removes the worktrees and branches of tasks that have ended.
func pruneCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("prune", "orchestra-tui prune [--all [--yes]] [--dry-run] [-C DIR]   (remove the worktrees and branches of ended tasks)", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	all := fs.Bool("all", false, "also remove branches with work not merged into the checked-out branch (asks first)")
	yes := fs.Bool("yes", false, "with --all, do not ask")
	dry := fs.Bool("dry-run", false, "say what would be removed, remove nothing")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	if len(rest) > 0 {
		return usageError(stderr, "prune", "unexpected argument %q", rest[0])
	}
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	ctx := context.Background()
	st, err := openExistingStore(ctx, r)
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	ts, err := st.TaskList(ctx, store.TaskListParams{})
	if err != nil {
		return fail(stderr, err)
	}
	into, err := r.CurrentBranch()
	if err != nil {
		return fail(stderr, fmt.Errorf("prune: %w", err))
	}

	type item struct {
		t        task.Task
		worktree string
		branch   bool
		ahead    int
	}
	var merged, unmerged []item
	for _, t := range ts {
		if !t.State.Terminal() {
			continue
		}
		it := item{t: t, branch: r.BranchExists(t.Branch)}
		wt := filepath.Join(r.Root, filepath.FromSlash(repo.WorktreesDir), string(t.ID))
		if _, err := os.Stat(wt); err == nil {
			it.worktree = wt
		}
		if it.worktree == "" && !it.branch {
			continue
		}
		if it.branch {
			if it.ahead, err = r.CountAhead("HEAD", t.Branch); err != nil {
				return fail(stderr, err)
			}
		}
		// Uncommitted work in the worktree of a task that did not finish
		// is unmerged work too.
		if it.ahead == 0 && it.worktree != "" && t.State != task.StateCompleted && t.State != task.StateMerged {
			if files, err := repo.Changed(it.worktree, "HEAD"); err == nil && len(files) > 0 {
				it.ahead = -len(files)
			}
		}
		if it.ahead == 0 {
			merged = append(merged, it)
		} else {
			unmerged = append(unmerged, it)
		}
	}
	describe := func(it item) string {
		what := "no work beyond " + into
		switch {
		case it.ahead > 0:
			what = fmt.Sprintf("%s not merged into %s", plural(it.ahead, "commit"), into)
		case it.ahead < 0:
			what = fmt.Sprintf("%s changed and never committed", plural(-it.ahead, "file"))
		}
		return fmt.Sprintf("%s %s (%s, %s): %s", it.t.ID.Short(), it.t.Branch, it.t.State, oneLine(it.t.Title), what)
	}
	remove := merged
	if *all && len(unmerged) > 0 {
		fmt.Fprintf(stdout, "These ended tasks have work that is not merged into %s; removing them loses it:\n", into)
		for _, it := range unmerged {
			fmt.Fprintln(stdout, "  "+describe(it))
		}
		if !*yes && !*dry {
			if !confirm(stdin, stdout, fmt.Sprintf("Remove %s with unmerged work? [y/N] ", plural(len(unmerged), "task's branch", "tasks' branches"))) {
				fmt.Fprintln(stdout, "kept them; nothing with unmerged work was removed")
				unmerged = nil
			}
		}
		remove = append(remove, unmerged...)
	}
	if len(remove) == 0 {
		fmt.Fprintln(stdout, "nothing to prune: no ended task has a worktree or branch whose work is merged")
	}
	removed := 0
	for _, it := range remove {
		if *dry {
			fmt.Fprintln(stdout, "would remove "+describe(it))
			continue
		}
		if it.worktree != "" {
			if err := r.WorktreeRemove(it.worktree); err != nil {
				return fail(stderr, err)
			}
		}
		if it.branch {
			if err := r.BranchDelete(it.t.Branch, true); err != nil {
				return fail(stderr, err)
			}
		}
		now := time.Now()
		_ = st.EventAppend(ctx, task.Event{ID: task.NewULID(now), TaskID: it.t.ID, Kind: task.EvBranchPruned, At: now,
			Text: fmt.Sprintf("Pruned: removed the worktree and branch %s (%s).", it.t.Branch, strings.TrimPrefix(describe(it), it.t.ID.Short()+" "+it.t.Branch+" "))})
		fmt.Fprintln(stdout, "removed "+describe(it))
		removed++
	}
	if !*all && len(unmerged) > 0 {
		fmt.Fprintf(stdout, "kept %s with work not merged into %s (merge it with `orchestra-tui merge TASK`, or `prune --all` to remove it anyway):\n",
			plural(len(unmerged), "task's branch", "tasks' branches"), into)
		for _, it := range unmerged {
			fmt.Fprintln(stdout, "  "+describe(it))
		}
	}
	return 0
}

// confirm asks a yes/no question on stdin; anything but y or yes is no,
// and so is a closed stdin.
func confirm(stdin io.Reader, stdout io.Writer, question string) bool {
	fmt.Fprint(stdout, question)
	line, _ := bufio.NewReader(stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true
	}
	return false
}

func plural(n int, one string, many ...string) string {
	if n == 1 {
		return "1 " + one
	}
	if len(many) > 0 {
		return fmt.Sprintf("%d %s", n, many[0])
	}
	return fmt.Sprintf("%d %ss", n, one)
}

// oneLine folds s onto one line without its escape sequences: a title
// came from outside and is printed to the operator.
func oneLine(s string) string { return strings.Join(strings.Fields(task.PlainText(s)), " ") }

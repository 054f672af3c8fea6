package coord

import (
	"context"

	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// worktreeHook adds the task's worktree, or fast-forwards the one this
// clone kept from an earlier attempt to what was fetched.
type worktreeHook struct{ repo *repo.Repo }

func (worktreeHook) name() string { return "worktree" }

func (h worktreeHook) prestart(_ context.Context, req *prestartRequest, resp *prestartResponse) error {
	t := req.task
	dir, err := h.repo.WorktreeAdd(string(t.ID), t.Branch, resp.from)
	if err != nil {
		return &task.Refusal{Reason: task.ReasonWorktreeFailed, Detail: err.Error()}
	}
	resp.dir = dir
	if resp.fetched != "" {
		// A worktree this clone kept from an earlier attempt starts from
		// what the engine that ran the task since has pushed.
		if _, err := repo.FastForward(dir, resp.fetched); err != nil {
			return &task.Refusal{Reason: task.ReasonWorktreeFailed, Detail: err.Error()}
		}
	}
	return nil
}

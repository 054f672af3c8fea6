package coord

import (
	"context"

	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// prestartHook is one step of an attempt's preparation, off the loop, in
// the shape of nomad's task runner hooks (TaskPrestartHook): the launcher
// runs its hooks in order, each reads the request and what the steps
// before it left in the response, and the first error ends the
// preparation. Each step is a file of its own (prestart_*.go) and holds
// only what it needs.
type prestartHook interface {
	name() string
	prestart(ctx context.Context, req *prestartRequest, resp *prestartResponse) error
}

// prestartRequest is the attempt being prepared.
type prestartRequest struct {
	task task.Task
	run  *run
	// cast is where the session's recording goes; baseline says whether
	// the task has no verdict yet, so the verify command runs before any
	// change.
	cast     string
	baseline bool
}

// prestartResponse is what the steps have made so far.
type prestartResponse struct {
	// from is the commit the worktree starts from; fetched is the task's
	// branch as [fleet] remote has it ("" for none).
	from, fetched string
	dir           string
	verdict       *verify.Verdict
	brief         string
	w             worker.Handle
}

// prepare runs off the loop: the attempt's prestart hooks, in order. It
// returns the worktree (once one was made), the running session, and the
// baseline verdict (once it ran), or the first step's error.
func (ln *launcher) prepare(ctx context.Context, t task.Task, r *run, cast string, baseline bool) (string, worker.Handle, *verify.Verdict, error) {
	req := &prestartRequest{task: t, run: r, cast: cast, baseline: baseline}
	var resp prestartResponse
	for _, h := range ln.hooks {
		if err := h.prestart(ctx, req, &resp); err != nil {
			return resp.dir, nil, resp.verdict, err
		}
	}
	return resp.dir, resp.w, resp.verdict, nil
}

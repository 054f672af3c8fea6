package coord

import (
	"context"
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/verify"
)

// baselineHook runs the verify command before any change, for a task that
// has no verdict yet; a console that is stopping launches nothing after it.
type baselineHook struct {
	timeout time.Duration
	owner   string
}

func (baselineHook) name() string { return "baseline" }

func (h baselineHook) prestart(ctx context.Context, req *prestartRequest, resp *prestartResponse) error {
	if req.baseline {
		t := req.task
		res := verify.Run(ctx, verify.Params{Dir: resp.dir, Command: t.Verify, Timeout: h.timeout, Task: string(t.ID), Owner: h.owner})
		resp.verdict = &res
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("the console is stopping: %w", err)
	}
	return nil
}

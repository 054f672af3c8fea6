package coord

import (
	"context"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// offlineKinds are the commands that need no live session, so they can be
// applied while no engine runs.
var offlineKinds = map[CommandKind]bool{
	CmdAdd: true, CmdCorrect: true, CmdPark: true, CmdCancel: true, CmdUnpark: true,
	CmdApprove: true, CmdRetry: true, CmdMerge: true,
}

// ApplyOffline applies an operator command while no engine runs, through
// the coordinator's own command code on a coordinator that is not started:
// the transition, the guard and the event text are exactly the engine's.
// The caller holds the engine lock, so no engine starts meanwhile and
// misses the change. A command that needs a live session (resubmit,
// extend, expire) is refused with what to do instead.
func (c *Coordinator) ApplyOffline(ctx context.Context, cmd Command) (Result, error) {
	if c.running.Load() {
		return Result{}, fmt.Errorf("%s: the coordinator is running; use Do", cmd.Kind)
	}
	if !offlineKinds[cmd.Kind] {
		return Result{}, fmt.Errorf("%s needs a running engine (it owns the sessions); start one with `orchestra-tui` or `orchestra-tui engine`", cmd.Kind)
	}
	if err := c.load(ctx); err != nil {
		return Result{}, err
	}
	rep := c.commands.handleCommand(ctx, cmd)
	// A command that completes off the loop (approve and merge run git)
	// hands its result back as the loop would take it; with no loop
	// running, this is the loop.
	for rep.later != nil {
		select {
		case apply := <-c.back:
			apply()
		case rep = <-rep.later:
		case <-ctx.Done():
			return Result{}, ctx.Err()
		}
	}
	// What the command started besides (an approved branch's push) lands
	// before the caller gives up the engine lock.
	for c.inflight.Load() > 0 {
		select {
		case apply := <-c.back:
			apply()
		case <-c.idle:
		case <-ctx.Done():
			return rep.res, ctx.Err()
		}
	}
	for len(c.back) > 0 {
		(<-c.back)()
	}
	return rep.res, rep.err
}

// ResumeOffline creates the task a handoff file describes before the
// coordinator runs (`run --resume`), through the same code as CmdResume's
// import: the file read and checked, the harness it names (or harness)
// checked against this configuration, the task imported. The caller holds
// the engine lock (engine.Serve); Run then loads and places it. Its errors
// name the field, not the file. (On Opened, the offline process's handle,
// not on the coordinator: the loop's type keeps to its own methods.)
func (o *Opened) ResumeOffline(ctx context.Context, path, harness, model string) (task.Task, error) {
	c := o.Coordinator
	if c.running.Load() {
		return task.Task{}, fmt.Errorf("resume: the coordinator is running; use Do")
	}
	if harness != "" {
		if err := checkHarness(c.cfg.Harness, "harness", harness); err != nil {
			return task.Task{}, fmt.Errorf("nothing was created: %w", err)
		}
	}
	return importHandoff(ctx, c.st, c.p.Repo, c.cfg.Harness, c.now, c.key.key, expandHome(path), harness, model)
}

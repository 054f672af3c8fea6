package coord

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/orchestra-tui/orchestra-tui/fork"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// forkCommandTimeout bounds a fork command that arrives on the control
// socket: training reads the whole background, which takes the real
// service far longer than any other command.
const forkCommandTimeout = 10 * time.Minute

// baseTrailer ends a base's background: the base must only read it; the
// blocks come later as forks.
const baseTrailer = "\n\n---\nThis is the background for the blocks of work that follow, each sent to you later as its own message. " +
	"Do not start on the work now: reply with one line saying you have read it, and wait for the first block."

// isForkCommand reports whether k is one of the fork commands, which run
// off the loop.
func isForkCommand(k CommandKind) bool {
	return k == CmdForkTrain || k == CmdForkRun || k == CmdForkList
}

// commandTimeout is how long the control socket lets command k run.
func commandTimeout(k CommandKind) time.Duration {
	if isForkCommand(k) {
		return forkCommandTimeout
	}
	return 30 * time.Second
}

// ForkCommand carries out a fork command (CmdForkTrain, CmdForkRun,
// CmdForkList) in the caller's goroutine. It needs no running loop, so the
// CLI uses it on a coordinator it opened but did not start when no console
// runs; with a running loop, the events it writes are published through it
// and the task's usage counts them at once.
func (c *Coordinator) ForkCommand(ctx context.Context, cmd Command) (Result, error) {
	return c.forks.command(ctx, cmd)
}

// command carries out a fork command (ForkCommand).
func (s *forkService) command(ctx context.Context, cmd Command) (Result, error) {
	switch cmd.Kind {
	case CmdForkList:
		return s.forkList(ctx, cmd.TaskID)
	case CmdForkTrain:
		t, err := s.findTask(ctx, cmd.TaskID)
		if err != nil {
			return Result{}, err
		}
		b, err := s.train(ctx, t, strings.TrimSpace(cmd.Text))
		if err != nil {
			return Result{TaskID: t.ID}, err
		}
		return Result{TaskID: t.ID, SessionID: b.ID, Message: fmt.Sprintf(
			"Trained base %s for task %s on %s (launch %s): %s. Cache warm until %s.",
			b.ID, t.ID.Short(), b.Model, b.Launch.Short(), b.Training,
			b.LastHitAt.Add(s.reg.Policy().CacheLifetime).UTC().Format("15:04:05"))}, nil
	case CmdForkRun:
		t, err := s.findTask(ctx, cmd.TaskID)
		if err != nil {
			return Result{}, err
		}
		res, err := s.runFork(ctx, t, cmd.Text)
		if err != nil {
			return Result{TaskID: t.ID}, err
		}
		return Result{TaskID: t.ID, SessionID: res.SessionID, Message: forkSummary(res)}, nil
	default:
		return Result{}, fmt.Errorf("%q is not a fork command", cmd.Kind)
	}
}

// findTask resolves an operator's task reference against the store, which
// is safe off the loop.
func (s *forkService) findTask(ctx context.Context, ref task.ID) (task.Task, error) {
	ts, err := s.st.TaskList(ctx, store.TaskListParams{})
	if err != nil {
		return task.Task{}, fmt.Errorf("list tasks: %w", err)
	}
	ids := make([]task.ID, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	id, err := ResolveID(ids, string(ref))
	if err != nil {
		return task.Task{}, err
	}
	for _, t := range ts {
		if t.ID == id {
			return t, nil
		}
	}
	return task.Task{}, fmt.Errorf("task %s: %w", id, store.ErrNotFound)
}

// forkRun says how to run harness h in print mode for t in dir, exactly as
// every base and fork of t on h is run, so their fingerprints agree.
func (s *forkService) forkRun(t task.Task, h, dir string) (fork.Run, error) {
	spec, ok := s.harness[h]
	if !ok {
		return fork.Run{}, fmt.Errorf("unknown harness %q (configured: %s)", h, strings.Join(harnessNames(s.harness), ", "))
	}
	vars := map[string]string{"model": t.Model}
	for k, v := range s.vars {
		vars[k] = v
	}
	ps, err := fork.PrintSpec(spec.Expand(vars))
	if err != nil {
		return fork.Run{}, err
	}
	ps.Name = h
	return fork.Run{Spec: ps, Dir: dir, Environ: s.environ, Model: t.Model, TaskID: t.ID, Phase: t.Phase}, nil
}

// train trains a new base for t on harness h (empty: the task's) in
// the task's worktree, from the background its sessions get, and retires
// the task's older bases on that harness: forks start from the newest.
func (s *forkService) train(ctx context.Context, t task.Task, h string) (fork.Base, error) {
	if h == "" {
		h = harnessOf(t)
	}
	if t.State.Terminal() {
		return fork.Base{}, fmt.Errorf("task %s has ended (%s); a base would serve no block", t.ID.Short(), t.State)
	}
	dir, err := s.worktree(string(t.ID), t.Branch, t.BaseCommit)
	if err != nil {
		return fork.Base{}, fmt.Errorf("train a base for %s: %w", t.ID.Short(), err)
	}
	fr, err := s.forkRun(t, h, dir)
	if err != nil {
		return fork.Base{}, fmt.Errorf("train a base for %s: %w", t.ID.Short(), err)
	}
	bg, err := s.background(ctx, t, dir)
	if err != nil {
		return fork.Base{}, fmt.Errorf("train a base for %s: %w", t.ID.Short(), err)
	}
	older, err := s.reg.List(ctx, t.ID)
	if err != nil {
		return fork.Base{}, err
	}
	b, err := s.reg.Train(ctx, fr, bg+baseTrailer)
	if err != nil {
		return fork.Base{}, err
	}
	for _, o := range older {
		if o.RetiredAt.IsZero() && o.Harness == h {
			if err := s.reg.Retire(ctx, o.ID); err != nil {
				return b, err
			}
		}
	}
	return b, nil
}

// newestBase returns t's newest base in use.
func (s *forkService) newestBase(ctx context.Context, id task.ID) (fork.Base, error) {
	bases, err := s.reg.List(ctx, id)
	if err != nil {
		return fork.Base{}, err
	}
	for i := len(bases) - 1; i >= 0; i-- {
		if bases[i].RetiredAt.IsZero() {
			return bases[i], nil
		}
	}
	return fork.Base{}, fmt.Errorf("task %s has no trained base; train one with `orchestra-tui fork train %s`", id.Short(), id.Short())
}

// runFork runs block as a fork of t's newest base, launched as the base was.
func (s *forkService) runFork(ctx context.Context, t task.Task, block string) (fork.ForkResult, error) {
	if strings.TrimSpace(block) == "" {
		return fork.ForkResult{}, fmt.Errorf("a fork needs a prompt: the block of work it should do")
	}
	b, err := s.newestBase(ctx, t.ID)
	if err != nil {
		return fork.ForkResult{}, err
	}
	fr, err := s.forkRun(t, b.Harness, b.Launch.Dir)
	if err != nil {
		return fork.ForkResult{}, fmt.Errorf("fork base %s: %w", baseShort(b.ID), err)
	}
	defer s.keep.lock(b.ID)()
	return s.reg.Fork(ctx, b.ID, fr, fork.ContinuePrompt(block))
}

// forkSummary is what `fork run` prints: the reply and what the block cost.
func forkSummary(res fork.ForkResult) string {
	reply := strings.TrimSpace(res.Text)
	if len(reply) > 600 {
		reply = reply[:600] + "…"
	}
	_, own := res.Delta.Own.Sum()
	hit := "read the base from the cache"
	if !res.Hit {
		hit = "missed the cache"
	}
	return fmt.Sprintf("Fork %s of base %s %s.\nReply: %s\nDelta cost (beyond the base): $%.4f (%s); the base's prefix read from cache: %d tokens, $%.4f; training it cost $%.4f.",
		res.SessionID, baseShort(res.BaseID), hit, reply, own, res.Delta.Own, res.Delta.PrefixTokens, res.Delta.PrefixCostUSD, res.Delta.TrainingCostUSD)
}

// forkList renders the bases (of one task, or all) with their cache
// clocks and the policy's next action, read from the store.
func (s *forkService) forkList(ctx context.Context, ref task.ID) (Result, error) {
	var id task.ID
	if ref != "" {
		t, err := s.findTask(ctx, ref)
		if err != nil {
			return Result{}, err
		}
		id = t.ID
	}
	bases, err := s.reg.List(ctx, id)
	if err != nil {
		return Result{}, fmt.Errorf("list trained bases: %w", err)
	}
	if len(bases) == 0 {
		return Result{TaskID: id, Message: "no trained bases: train one with `orchestra-tui fork train TASK`"}, nil
	}
	now := s.loop.now()
	var sb strings.Builder
	tw := tabwriter.NewWriter(&sb, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BASE\tTASK\tMODEL\tFORKS\tTRAINING\tCACHE\tNEXT")
	var reasons []string
	for _, b := range bases {
		d := fork.Decide(b, s.reg.Policy(), now)
		_, cost := b.Training.Sum()
		cache := "expired"
		switch {
		case !b.RetiredAt.IsZero():
			cache = "-"
		case d.ExpiresAt.After(now):
			cache = "warm " + d.ExpiresAt.Sub(now).Round(time.Second).String()
		}
		next := string(d.Action)
		if !d.Due.IsZero() {
			next += " at " + d.Due.UTC().Format("15:04:05") // as the reasons say it
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t$%.4f\t%s\t%s\n", b.ID, b.TaskID.Short(), b.Model, b.Forks, cost, cache, next)
		reasons = append(reasons, baseShort(b.ID)+": "+d.Reason)
	}
	tw.Flush()
	return Result{TaskID: id, Message: strings.TrimRight(sb.String(), "\n") + "\n\n" + strings.Join(reasons, "\n")}, nil
}

// baseLocks serialises the runs on one base: its row is read, changed and
// written back by each fork, so two at once would lose a count or a hit.
type baseLocks struct{ m sync.Map }

// lock takes base id's lock and returns its release.
func (l *baseLocks) lock(id string) func() {
	v, _ := l.m.LoadOrStore(id, &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// baseShort abbreviates a base's conversation id as package fork does in
// its sentences (the first eight characters), so the ledger names a base
// one way.
func baseShort(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	return id
}

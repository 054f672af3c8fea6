package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/sched"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// opSynopsis is each operator command's usage line.
var opSynopsis = map[string]string{
	"correct":  "orchestra-tui correct TASK TEXT   (record a human decision; a running engine types it into the live pane)",
	"resubmit": "orchestra-tui resubmit TASK   (resubmit the task's stuck pane; needs a running engine)",
	"extend":   "orchestra-tui extend TASK DURATION   (extend the task's lease, e.g. 10m; needs a running engine)",
	"expire":   "orchestra-tui expire TASK   (expire the task's lease now; needs a running engine)",
	"cancel":   "orchestra-tui cancel TASK   (cancel the task; its session stops)",
	"park":     "orchestra-tui park TASK   (park the task; its session stops, the attempt is not counted)",
	"unpark":   "orchestra-tui unpark TASK   (queue a parked task again)",
	"approve":  "orchestra-tui approve TASK   (approve a task awaiting review; says where its work is and how to merge it)",
	"retry":    "orchestra-tui retry TASK   (queue a failed or cancelled task again with a fresh attempt budget; its dead ends are kept)",
	"merge":    "orchestra-tui merge TASK   (merge an approved task's branch into the checked-out branch; [finalise] merge says how)",
}

// opCmd sends an operator command to the running engine. With none
// running, a command that needs no session (correct, park, cancel, unpark,
// approve, retry, merge) is applied to the store through the same
// coordinator code; resubmit, extend and expire need the engine, which owns
// the sessions.
func opCmd(name string, args []string, stdout, stderr io.Writer) int {
	synopsis := opSynopsis[name]
	fs := newFlags(name, synopsis+"\n\nTASK is a task id or any unique part of one, as `orchestra-tui status` shows it.", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	cmd := coord.Command{Kind: coord.CommandKind(name), Author: author()}
	switch name {
	case "correct":
		if len(rest) < 2 {
			return usageError(stderr, name, "want a task and the text of the correction\nusage: %s", synopsis)
		}
		cmd.Text = strings.Join(rest[1:], " ")
	case "extend":
		if len(rest) != 2 {
			return usageError(stderr, name, "want a task and a duration\nusage: %s", synopsis)
		}
		d, err := time.ParseDuration(rest[1])
		if err != nil || d <= 0 {
			return usageError(stderr, name, "%q is not a positive duration (e.g. 90s, 10m, 1h)", rest[1])
		}
		cmd.Duration = d
	default:
		if len(rest) != 1 {
			return usageError(stderr, name, "want exactly one task\nusage: %s", synopsis)
		}
	}
	cmd.TaskID = task.ID(rest[0])
	// The command waits on the engine twice (its welcome, its answer); on
	// cores busy with other work each wakeup could wait for a busy task's
	// whole slice. Ask to be woken before it ends, as the engine and its
	// hosts do; the share of CPU is unchanged (package sched).
	_ = sched.ShortSlice()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// With an engine running, the command is one request on its socket:
	// no git, no store, no configuration (liveroot.go).
	if root, ok := liveEngineRoot(*dir); ok {
		res, err := engineDo(ctx, root, cmd)
		if err == nil {
			fmt.Fprintln(stdout, res.Message)
			return 0
		}
		if !errors.Is(err, errNoEngine) {
			return fail(stderr, err)
		}
	}
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	res, err := engineDo(ctx, r.Root, cmd)
	if err == nil {
		fmt.Fprintln(stdout, res.Message)
		return 0
	}
	if !errors.Is(err, errNoEngine) {
		return fail(stderr, err)
	}
	// The engine owns the sessions; without one, the commands that need no
	// session (approve, retry and merge among them) run through the
	// coordinator's own command code, under the engine lock.
	res, err = applyOffline(ctx, r.Root, cmd)
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintln(stdout, res.Message+offlineNote(cmd.Kind))
	return 0
}

// offlineNote is what the answer of a command applied with no engine adds:
// that no engine runs, and the way to start one only where the command's
// effect waits for one (a correction for its next brief, an unparked task
// to be placed). A cancelled task waits for nothing.
func offlineNote(k coord.CommandKind) string {
	if k == coord.CmdCancel {
		return " (no engine runs)"
	}
	return " (no engine runs; `orchestra-tui` starts one)"
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// opSynopsis is each operator command's usage line.
var opSynopsis = map[string]string{
	"correct":  "orchestra-tui correct TASK TEXT   (record a human decision; a running console types it into the live pane)",
	"resubmit": "orchestra-tui resubmit TASK   (resubmit the task's stuck pane; needs a running console)",
	"extend":   "orchestra-tui extend TASK DURATION   (extend the task's lease, e.g. 10m; needs a running console)",
	"expire":   "orchestra-tui expire TASK   (expire the task's lease now; needs a running console)",
	"cancel":   "orchestra-tui cancel TASK   (cancel the task; needs a running console)",
	"park":     "orchestra-tui park TASK   (park the task; needs a running console)",
	"unpark":   "orchestra-tui unpark TASK   (queue a parked task again; needs a running console)",
	"approve":  "orchestra-tui approve TASK   (approve a task awaiting review; says where its work is and how to merge it)",
	"retry":    "orchestra-tui retry TASK   (queue a failed or cancelled task again with a fresh attempt budget; its dead ends are kept)",
	"merge":    "orchestra-tui merge TASK   (merge an approved task's branch into the checked-out branch; [finalise] merge says how)",
}

// opCmd sends an operator command to the running console. A correction made
// while no console runs is stored and reaches the task through its next
// brief; the other commands need the console, which owns the sessions.
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
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := engineDo(ctx, r.Root, cmd)
	if err == nil {
		fmt.Fprintln(stdout, res.Message)
		return 0
	}
	if !errors.Is(err, errNoEngine) {
		return fail(stderr, err)
	}
	if offlineOps[name] {
		return offlineOp(ctx, r, cmd, stdout, stderr)
	}
	if name != "correct" {
		return fail(stderr, fmt.Errorf("%s needs a running console (it owns the sessions); start one with `orchestra-tui` or `orchestra-tui run --headless`", name))
	}
	return correctOffline(ctx, r, cmd, stdout, stderr)
}

// correctOffline stores a decision while no console runs.
func correctOffline(ctx context.Context, r *repo.Repo, cmd coord.Command, stdout, stderr io.Writer) int {
	cfg, err := config.Load(r.Root)
	if err != nil {
		return fail(stderr, err)
	}
	if err := coord.CheckCorrection(cmd.Text, cfg.Limits.CorrectionBytes); err != nil {
		return fail(stderr, err)
	}
	st, err := openStore(ctx, r)
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	ts, err := st.TaskList(ctx, store.TaskListParams{})
	if err != nil {
		return fail(stderr, err)
	}
	ids := make([]task.ID, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	id, err := coord.ResolveID(ids, string(cmd.TaskID))
	if err != nil {
		return fail(stderr, err)
	}
	now := time.Now()
	d := store.Decision{ID: task.NewULID(now), TaskID: id, Text: cmd.Text, Author: cmd.Author, At: now}
	ev := task.Event{ID: task.NewULID(now), TaskID: id, Kind: task.EvDecisionRecorded, At: now,
		Text: fmt.Sprintf("Human decision by %s: %s", d.Author, d.Text)}
	if err := st.DecisionInsert(ctx, d, ev); err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintln(stdout, "queued for the next brief (no console is running)")
	return 0
}

package coord

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/orchestra-tui/orchestra-tui/handoff"
	"github.com/orchestra-tui/orchestra-tui/jail"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/sign"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// resumeMu serialises this process's resumes, so two of the same file do
// not both create and then undo its branch; the store's live-branch
// constraint is what refuses the second task, across processes too.
// Resumes are rare operator actions, so one lock costs nothing.
var resumeMu sync.Mutex

// resumeCommand creates a task from a handoff file, as `run --resume` does
// before a coordinator starts. Reading the file, checking the repository and
// importing the task do file and git IO (a fetch, when the task branch is
// missing here), so they run off the loop and never stall lease ticks; the
// imported task is then loaded on the loop, which places it at once. Any
// refusal is the command's error, naming the field and the reason, and
// creates nothing.
func (cm *commands) resumeCommand(ctx context.Context, cmd Command) cmdReply {
	path := expandHome(strings.TrimSpace(cmd.Path))
	if path == "" {
		return cmdReply{err: errors.New("resume: path: no handoff file given")}
	}
	harness, model := strings.TrimSpace(cmd.Harness), strings.TrimSpace(cmd.Model)
	if harness != "" {
		if err := checkHarness(cm.cfg.Harness, "harness", harness); err != nil {
			return cmdReply{err: fmt.Errorf("resume %s: nothing was created: %w", path, err)}
		}
	}
	later := make(chan cmdReply, 1)
	cm.loop.async(func() func() {
		t, err := importHandoff(cm.loop.io(), cm.st, cm.repo, cm.cfg.Harness, cm.loop.now, cm.key.key, path, harness, model)
		if err != nil {
			later <- cmdReply{err: fmt.Errorf("resume %s: %w", path, err)}
			return nil
		}
		return func() { later <- cm.loadResumed(ctx, t, path) }
	})
	return cmdReply{later: later}
}

// importHandoff reads, parses and imports the handoff file. It runs off the
// loop and touches no loop-owned state.
// It sees the store, the repository, the harnesses configured, the time
// and the fleet key to sign the task with.
func importHandoff(ctx context.Context, st store.Store, r *repo.Repo, harnesses map[string]session.Spec, now func() time.Time, key sign.Key, path, harness, model string) (task.Task, error) {
	data, err := readLimited(path, handoff.MaxBytes)
	if err != nil {
		return task.Task{}, err
	}
	d, err := handoff.Parse(data)
	if err != nil {
		return task.Task{}, fmt.Errorf("nothing was created: %w", err)
	}
	if harness == "" {
		// The file's harness must exist here too, or the task could
		// never be placed.
		if err := checkHarness(harnesses, "task.harness", harnessOf(task.Task{Harness: d.Task.Harness})); err != nil {
			return task.Task{}, fmt.Errorf("nothing was created: %w; name a harness to resume on", err)
		}
	}
	resumeMu.Lock()
	defer resumeMu.Unlock()
	return handoff.Resume(ctx, st, r, d, harness, model, now(), key)
}

// loadResumed makes the imported task the loop's own: its row, the models
// and usage of the sessions it brought, and its events, published so every
// view sees it at once. It runs on the loop.
func (cm *commands) loadResumed(ctx context.Context, t task.Task, path string) cmdReply {
	if stored, err := cm.st.TaskGet(ctx, t.ID); err == nil {
		t = stored
	}
	cm.tasks[t.ID] = t
	if ss, err := cm.st.SessionList(ctx, t.ID); err == nil {
		for _, s := range ss {
			cm.noteModel(t.ID, s.Model)
		}
	}
	if err := cm.usage.load(ctx, t.ID); err != nil {
		cm.loop.record(ctx, cm.loop.event(t.ID, "", task.EvRefusal, "Could not read the resumed task's usage: "+err.Error()))
	}
	if evs, err := cm.st.EventList(ctx, store.EventListParams{TaskID: t.ID}); err == nil {
		for _, ev := range evs {
			cm.hub.event(ev)
		}
	}
	model := t.Model
	if model == "" {
		model = "its default model"
	}
	// Placed and published before the reply, so whoever reads the reply
	// finds the task in the snapshot, already leased when a slot is free.
	cm.place(ctx)
	cm.publish()
	msg := fmt.Sprintf("resumed task %s from %s at phase %s (harness %s, %s)",
		t.ID.Short(), filepath.Base(path), t.Phase, harnessOf(t), model)
	return cmdReply{res: Result{TaskID: t.ID, Message: msg}}
}

// checkHarness refuses a harness that harnesses (this console's
// configuration) has no entry for.
func checkHarness(harnesses map[string]session.Spec, field, name string) error {
	if _, ok := harnesses[name]; ok {
		return nil
	}
	return fmt.Errorf("%s: no harness named %q is configured (known: %s)", field, name, strings.Join(harnessNames(harnesses), ", "))
}

// readLimited reads a file, refusing one larger than limit before reading
// all of it.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := jail.OpenRegular(path)
	if errors.Is(err, fs.ErrNotExist) {
		where := ""
		if !filepath.IsAbs(path) {
			if wd, err := os.Getwd(); err == nil {
				where = " (a relative path starts at " + wd + ")"
			}
		}
		return nil, fmt.Errorf("path: no such file%s", where)
	}
	if err != nil {
		return nil, fmt.Errorf("path: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("path: read: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("path: larger than any handoff file (%d bytes at most); nothing was created", limit)
	}
	return data, nil
}

// expandHome lets an operator type ~/handoff.json.
func expandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~"))
}

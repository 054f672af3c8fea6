package coord

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// DiskUse is what one task holds on disk, in bytes, as last measured: its
// worktree and its sessions' recordings. At is zero when it was never
// measured.
type DiskUse struct {
	Worktree   int64
	Recordings int64
	At         time.Time
}

// Total is the worktree and the recordings together.
func (d DiskUse) Total() int64 { return d.Worktree + d.Recordings }

// diskMeter keeps each task's disk use. Measuring walks directories, so it
// runs off the loop, one walk at a time, and only when a task's disk use
// can have changed (diskKinds), never per frame or per tick: a task is
// marked, and the next walk measures every marked task. It lives on the
// loop; what it sees of the coordinator is the loop (loopView) and the
// repository's root.
type diskMeter struct {
	use     map[task.ID]DiskUse
	marked  map[task.ID]bool
	walking bool

	loop loopView
	root string
	// onMeasured, when set (tests), is called on the loop with each walk's
	// measurements, once they are in the next snapshot's reach.
	onMeasured func(map[task.ID]DiskUse)
}

// diskKinds are the events after which a task's disk use is measured
// again: its worktree was made (a launch), a session's recording ended (an
// exit), a phase was sealed or gated, the task ended or was pruned.
var diskKinds = map[task.Kind]bool{
	task.EvSessionLaunched: true, task.EvSessionExited: true, task.EvPhaseAdvanced: true,
	task.EvVerifyFinished: true, task.EvTaskAwaiting: true, task.EvTaskCompleted: true,
	task.EvTaskFailed: true, task.EvTaskCancelled: true, task.EvBranchPruned: true,
}

// note marks the event's task for measuring when the event can have
// changed its disk use, and starts a walk when none runs.
func (d *diskMeter) note(ev task.Event) {
	if ev.TaskID == "" || !diskKinds[ev.Kind] {
		return
	}
	d.want(ev.TaskID)
}

// want marks the tasks for measuring and starts a walk when none runs.
func (d *diskMeter) want(ids ...task.ID) {
	if d.marked == nil {
		d.marked = map[task.ID]bool{}
	}
	for _, id := range ids {
		d.marked[id] = true
	}
	d.walk()
}

// walk measures every marked task off the loop, unless a walk runs (its
// end starts the next) or the loop's IO context is not set yet (Run starts
// the first walk once it is).
func (d *diskMeter) walk() {
	ctx := d.loop.io()
	if d.walking || len(d.marked) == 0 || ctx == nil {
		return
	}
	ids := make([]task.ID, 0, len(d.marked))
	for id := range d.marked {
		ids = append(ids, id)
	}
	clear(d.marked)
	d.walking = true
	root, now := d.root, d.loop.now
	d.loop.async(func() func() {
		got := make(map[task.ID]DiskUse, len(ids))
		// Most tasks of a long history hold nothing on disk any more
		// (pruned worktrees, no recordings): the two parent directories
		// are listed once rather than ten thousand missing paths walked.
		held := map[string]bool{}
		for _, dir := range []string{filepath.FromSlash(repo.WorktreesDir), filepath.Join(task.StateDir, "runs")} {
			es, err := os.ReadDir(filepath.Join(root, dir))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				held = nil // unreadable: walk every task, counting what can be read
				break
			}
			for _, e := range es {
				held[e.Name()] = true
			}
		}
		for _, id := range ids {
			if ctx.Err() != nil {
				break
			}
			if held != nil && !held[string(id)] {
				got[id] = DiskUse{At: now()}
				continue
			}
			got[id] = measureDisk(ctx, root, id, now())
		}
		return func() {
			d.walking = false
			if d.use == nil {
				d.use = map[task.ID]DiskUse{}
			}
			for id, u := range got {
				d.use[id] = u
			}
			if d.onMeasured != nil {
				d.onMeasured(got)
			}
			d.walk()
		}
	})
}

// measureDisk sums the sizes of the regular files in the task's worktree
// and its recordings directory. Symbolic links are not followed: a link an
// agent made to a large directory elsewhere is not the task's disk use.
func measureDisk(ctx context.Context, root string, id task.ID, now time.Time) DiskUse {
	return DiskUse{
		Worktree:   dirSize(ctx, filepath.Join(root, filepath.FromSlash(repo.WorktreesDir), string(id))),
		Recordings: dirSize(ctx, filepath.Join(root, task.StateDir, "runs", string(id))),
		At:         now,
	}
}

func dirSize(ctx context.Context, dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // gone or unreadable: count what can be read
		}
		if ctx.Err() != nil {
			return fs.SkipAll
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

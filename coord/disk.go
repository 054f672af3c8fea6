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
// loop.
type diskMeter struct {
	use     map[task.ID]DiskUse
	want    map[task.ID]bool
	walking bool
}

// diskKinds are the events after which a task's disk use is measured
// again: its worktree was made (a launch), a session's recording ended (an
// exit), a phase was sealed or gated, the task ended or was pruned.
var diskKinds = map[task.Kind]bool{
	task.EvSessionLaunched: true, task.EvSessionExited: true, task.EvPhaseAdvanced: true,
	task.EvVerifyFinished: true, task.EvTaskAwaiting: true, task.EvTaskCompleted: true,
	task.EvTaskFailed: true, task.EvTaskCancelled: true, task.EvBranchPruned: true,
}

// noteDisk marks the event's task for measuring when the event can have
// changed its disk use, and starts a walk when none runs.
func (c *Coordinator) noteDisk(ev task.Event) {
	if ev.TaskID == "" || !diskKinds[ev.Kind] {
		return
	}
	c.wantDisk(ev.TaskID)
}

func (c *Coordinator) wantDisk(ids ...task.ID) {
	if c.disk.want == nil {
		c.disk.want = map[task.ID]bool{}
	}
	for _, id := range ids {
		c.disk.want[id] = true
	}
	c.walkDisk()
}

// walkDisk measures every marked task off the loop, unless a walk runs
// (its end starts the next) or the loop's IO context is not set yet (Run
// starts the first walk once it is).
func (c *Coordinator) walkDisk() {
	if c.disk.walking || len(c.disk.want) == 0 || c.io == nil {
		return
	}
	ids := make([]task.ID, 0, len(c.disk.want))
	for id := range c.disk.want {
		ids = append(ids, id)
	}
	clear(c.disk.want)
	c.disk.walking = true
	ctx, root := c.io, c.p.Repo.Root
	c.async(func() func() {
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
				got[id] = DiskUse{At: c.now()}
				continue
			}
			got[id] = measureDisk(ctx, root, id, c.now())
		}
		return func() {
			c.disk.walking = false
			if c.disk.use == nil {
				c.disk.use = map[task.ID]DiskUse{}
			}
			for id, u := range got {
				c.disk.use[id] = u
			}
			if c.onDiskMeasured != nil {
				c.onDiskMeasured(got)
			}
			c.walkDisk()
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

package worker

import (
	"fmt"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// One inotify instance serves every session. A Linux user has 128 inotify
// instances by default: with one per session, the 128th launch failed and
// its task failed for good. The shared watcher adds each session's state
// directory as one watch and fans its events out; a session only needs to
// know "something changed in my directory" (it then looks for itself), so
// each subscriber has a one-slot channel and a burst of events coalesces.

type dirWatcher struct {
	once sync.Once
	err  error
	w    *fsnotify.Watcher

	mu   sync.Mutex
	subs map[string]map[*dirSub]struct{} // by directory
}

// dirSub is one session's subscription to one directory.
type dirSub struct {
	dir string
	c   chan struct{}
}

var watcher dirWatcher

// watchDir subscribes to changes in dir (its entries being created,
// written, removed or renamed, and dir itself going away) and returns the
// channel that receives after each, and the cancel.
func watchDir(dir string) (<-chan struct{}, func(), error) {
	watcher.once.Do(func() {
		watcher.w, watcher.err = fsnotify.NewWatcher()
		if watcher.err == nil {
			watcher.subs = map[string]map[*dirSub]struct{}{}
			go watcher.run()
		}
	})
	if watcher.err != nil {
		return nil, nil, fmt.Errorf("inotify: %w", watcher.err)
	}
	dir = filepath.Clean(dir)
	s := &dirSub{dir: dir, c: make(chan struct{}, 1)}
	watcher.mu.Lock()
	defer watcher.mu.Unlock()
	set := watcher.subs[dir]
	if set == nil {
		if err := watcher.w.Add(dir); err != nil {
			return nil, nil, fmt.Errorf("inotify watch %s: %w", dir, err)
		}
		set = map[*dirSub]struct{}{}
		watcher.subs[dir] = set
	}
	set[s] = struct{}{}
	return s.c, func() { watcher.cancel(s) }, nil
}

func (d *dirWatcher) cancel(s *dirSub) {
	d.mu.Lock()
	defer d.mu.Unlock()
	set := d.subs[s.dir]
	if _, ok := set[s]; !ok {
		return
	}
	delete(set, s)
	if len(set) == 0 {
		delete(d.subs, s.dir)
		_ = d.w.Remove(s.dir) // fails harmlessly when the directory is gone
	}
}

// run fans events out for the life of the process.
func (d *dirWatcher) run() {
	for {
		select {
		case ev, ok := <-d.w.Events:
			if !ok {
				return
			}
			d.mu.Lock()
			d.notify(filepath.Dir(ev.Name))
			d.notify(filepath.Clean(ev.Name)) // the directory itself
			d.mu.Unlock()
		case _, ok := <-d.w.Errors:
			if !ok {
				return
			}
			// An overflow lost events of unknown directories: wake all.
			d.mu.Lock()
			for dir := range d.subs {
				d.notify(dir)
			}
			d.mu.Unlock()
		}
	}
}

// notify wakes dir's subscribers without blocking; the caller holds mu.
func (d *dirWatcher) notify(dir string) {
	for s := range d.subs[dir] {
		select {
		case s.c <- struct{}{}:
		default:
		}
	}
}

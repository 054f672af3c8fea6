// Package dirwatch is the one inotify instance of the process. A Linux user
// has 128 inotify instances by default: with one per session (the sentinel
// watch) and another per usage follower, the 64th Claude Code launch failed
// and its task failed for good. Every directory watch of the process is a
// watch on the one shared fsnotify watcher, which fans events out to the
// subscribers of that directory.
//
// A subscriber is woken through a one-slot channel, so a burst of events
// coalesces; one that asked for names takes the changed paths since its last
// look (bounded: past maxPending, or when the kernel's queue overflowed, it
// is told to look at everything instead).
package dirwatch

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// maxPending bounds the changes one subscriber holds between looks.
const maxPending = 4096

// Change is one path under a watched directory that changed: an entry of
// the directory, or the directory itself.
type Change struct {
	Name string
	Op   fsnotify.Op
}

// Sub is one subscriber's watch of any number of directories.
type Sub struct {
	c     chan struct{}
	names bool

	mu       sync.Mutex // under shared.mu when both are held
	dirs     map[string]bool
	pending  []Change
	overflow bool
	closed   bool
}

// shared is the process's watcher and who listens to which directory.
type shared struct {
	once sync.Once
	err  error
	w    *fsnotify.Watcher

	mu    sync.Mutex
	subs  map[string]map[*Sub]struct{} // by directory
	added map[string]bool              // directories the kernel watches for us
}

var watcher shared

func (d *shared) start() error {
	d.once.Do(func() {
		d.w, d.err = fsnotify.NewWatcher()
		if d.err == nil {
			d.subs = map[string]map[*Sub]struct{}{}
			d.added = map[string]bool{}
			go d.run()
		}
	})
	if d.err != nil {
		return fmt.Errorf("inotify: %w", d.err)
	}
	return nil
}

// New returns a subscriber with no directory yet. With names set it keeps
// the changed paths for Take; without, it is only woken.
func New(names bool) (*Sub, error) {
	if err := watcher.start(); err != nil {
		return nil, err
	}
	return &Sub{c: make(chan struct{}, 1), names: names, dirs: map[string]bool{}}, nil
}

// Dir subscribes to changes in dir (its entries being created, written,
// removed or renamed, and dir itself going away) and returns the channel
// that receives after each, and the cancel.
func Dir(dir string) (<-chan struct{}, func(), error) {
	s, err := New(false)
	if err != nil {
		return nil, nil, err
	}
	if err := s.Add(dir); err != nil {
		return nil, nil, err
	}
	return s.C(), s.Close, nil
}

// C receives after changes in any of the subscriber's directories.
func (s *Sub) C() <-chan struct{} { return s.c }

// Add watches dir for s as well. Adding a directory twice is harmless.
func (s *Sub) Add(dir string) error {
	dir = filepath.Clean(dir)
	d := &watcher
	d.mu.Lock()
	defer d.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.dirs[dir] {
		return nil
	}
	if !d.added[dir] {
		if err := d.w.Add(dir); err != nil {
			return fmt.Errorf("inotify watch %s: %w", dir, err)
		}
		d.added[dir] = true
	}
	set := d.subs[dir]
	if set == nil {
		set = map[*Sub]struct{}{}
		d.subs[dir] = set
	}
	set[s] = struct{}{}
	s.dirs[dir] = true
	return nil
}

// Take returns the changes since the last Take, and whether some were lost
// (the subscriber must then look at everything it watches).
func (s *Sub) Take() ([]Change, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out, over := s.pending, s.overflow
	s.pending, s.overflow = nil, false
	return out, over
}

// Close ends every watch of s. The kernel's watch of a directory ends with
// its last subscriber.
func (s *Sub) Close() {
	d := &watcher
	d.mu.Lock()
	defer d.mu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	s.closed = true
	for dir := range s.dirs {
		set := d.subs[dir]
		delete(set, s)
		if len(set) == 0 {
			delete(d.subs, dir)
			if d.added[dir] {
				delete(d.added, dir)
				_ = d.w.Remove(dir) // fails harmlessly when the directory is gone
			}
		}
	}
	s.dirs = nil
}

// run fans events out for the life of the process.
func (d *shared) run() {
	for {
		select {
		case ev, ok := <-d.w.Events:
			if !ok {
				return
			}
			name := filepath.Clean(ev.Name)
			d.mu.Lock()
			d.notify(filepath.Dir(name), ev)
			if _, ok := d.subs[name]; ok {
				d.notify(name, ev) // the directory itself
				if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
					// The kernel dropped its watch with the directory:
					// one made again under this name must be added anew.
					delete(d.added, name)
				}
			}
			d.mu.Unlock()
		case _, ok := <-d.w.Errors:
			if !ok {
				return
			}
			// An overflow lost events of unknown directories: wake all.
			d.mu.Lock()
			for _, set := range d.subs {
				for s := range set {
					s.lost()
				}
			}
			d.mu.Unlock()
		}
	}
}

// notify hands ev to dir's subscribers without blocking; the caller holds
// d.mu.
func (d *shared) notify(dir string, ev fsnotify.Event) {
	for s := range d.subs[dir] {
		s.mu.Lock()
		if s.names && !s.overflow {
			if len(s.pending) < maxPending {
				s.pending = append(s.pending, Change{Name: ev.Name, Op: ev.Op})
			} else {
				s.pending, s.overflow = nil, true
			}
		}
		s.mu.Unlock()
		s.wake()
	}
}

// lost tells s that events were lost.
func (s *Sub) lost() {
	s.mu.Lock()
	s.pending, s.overflow = nil, true
	s.mu.Unlock()
	s.wake()
}

func (s *Sub) wake() {
	select {
	case s.c <- struct{}{}:
	default:
	}
}

// Instances counts this process's inotify instances from /proc/self/fd
// (0 where there is no /proc): what the tests check the sharing with.
func Instances() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && target == "anon_inode:inotify" {
			n++
		}
	}
	return n
}

package usage

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/orchestra-tui/orchestra-tui/dirwatch"
	"github.com/orchestra-tui/orchestra-tui/jail"
)

// Follower follows the JSON-lines files under a directory as they grow and
// hands each new usage record to its callback, once per reply. Files that
// exist when it starts are followed from their current end, so only what is
// written afterwards counts (a resumed conversation appends to its old
// file); files created later are read from the start.
//
// It never polls: it reads when fsnotify reports a write or a create, and
// once more, to the end of every file, when it is closed. Its directories
// are watches on the process's one inotify instance (dirwatch), so a
// follower per session costs no instance of the user's 128.
type Follower struct {
	root  string
	since time.Time
	match func(path string) bool
	parse func(path string) LineParser
	emit  func(Record)
	w     *dirwatch.Sub

	mu      sync.Mutex
	files   map[string]*followed
	closed  bool            // the watcher is closed; addTree only registers files
	seen    map[string]bool // message ids already counted
	lastErr error

	quit chan struct{}
	done chan struct{}
}

// followed is one file's read position, its unfinished last line and the
// parser that reads its lines.
type followed struct {
	offset  int64
	partial []byte
	parse   LineParser
}

// LineParser returns the usage record of one line of a file, and false for
// a line that carries none. A parser belongs to one file and may keep state
// between its lines (the model a rollout file named earlier, say).
type LineParser func(line []byte) (Record, bool)

// Follow starts following Claude Code transcripts under root (created if
// missing) for which match returns true (nil matches every file). emit is
// called from the follower's goroutine, or from Close, never concurrently.
func Follow(root string, match func(path string) bool, emit func(Record)) (*Follower, error) {
	return FollowWith(root, time.Time{}, match, func(string) LineParser { return ParseTranscriptLine }, emit)
}

// FollowWith is Follow with the lines of each file read by a parser that
// parse returns for it, when the file is first seen. An existing file last
// modified at or after since is read from its start, not its end: an agent
// that creates its record as it starts (Codex) may do so before the
// follower does.
func FollowWith(root string, since time.Time, match func(path string) bool, parse func(path string) LineParser, emit func(Record)) (*Follower, error) {
	if match == nil {
		match = func(string) bool { return true }
	}
	if err := os.MkdirAll(root, 0o700); err != nil {
		return nil, fmt.Errorf("follow usage under %s: %w", root, err)
	}
	w, err := dirwatch.New(true)
	if err != nil {
		return nil, fmt.Errorf("follow usage under %s: %w", root, err)
	}
	f := &Follower{root: root, since: since, match: match, parse: parse, emit: emit, w: w, files: map[string]*followed{},
		seen: map[string]bool{}, quit: make(chan struct{}), done: make(chan struct{})}
	// Watch every directory first, then take the sizes: a write between
	// the two is then both reported and beyond the recorded size, so it is
	// read once, never lost.
	f.mu.Lock()
	err = f.addTree(root, true)
	f.mu.Unlock()
	if err != nil {
		w.Close()
		return nil, err
	}
	go f.loop()
	return f, nil
}

// addTree watches dir and its subdirectories and registers their files:
// at their current end when existing is true, from the start otherwise.
// The caller holds f.mu.
func (f *Follower) addTree(dir string, existing bool) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walked
			}
			return fmt.Errorf("follow usage: %w", err)
		}
		if d.IsDir() {
			if f.closed {
				return nil
			}
			if err := f.w.Add(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("follow usage: watch %s: %w", path, err)
			}
			return nil
		}
		if _, ok := f.files[path]; ok || !f.match(path) {
			return nil
		}
		st := &followed{parse: f.parse(path)}
		fromStart := !existing
		if existing {
			if fi, err := d.Info(); err == nil {
				st.offset = fi.Size()
				if !f.since.IsZero() && !fi.ModTime().Before(f.since) {
					st.offset, fromStart = 0, true
				}
			}
		}
		f.files[path] = st
		if fromStart {
			f.read(path, st)
		}
		return nil
	})
}

func (f *Follower) loop() {
	defer close(f.done)
	for {
		select {
		case <-f.quit:
			return
		case <-f.w.C():
			changes, lost := f.w.Take()
			if lost {
				f.rescan()
				continue
			}
			for _, ch := range changes {
				f.handle(ch)
			}
		}
	}
}

// rescan reads everything after events were lost: new directories and
// files from their start, known files from where they were.
func (f *Follower) rescan() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.addTree(f.root, false); err != nil {
		f.lastErr = err
	}
	for path, st := range f.files {
		f.read(path, st)
	}
}

func (f *Follower) handle(ev dirwatch.Change) {
	if !ev.Op.Has(fsnotify.Create) && !ev.Op.Has(fsnotify.Write) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if st, ok := f.files[ev.Name]; ok {
		f.read(ev.Name, st)
		return
	}
	fi, err := os.Stat(ev.Name)
	if err != nil {
		return
	}
	if fi.IsDir() {
		if err := f.addTree(ev.Name, false); err != nil {
			f.lastErr = err
		}
		return
	}
	if !f.match(ev.Name) {
		return
	}
	st := &followed{parse: f.parse(ev.Name)}
	f.files[ev.Name] = st
	f.read(ev.Name, st)
}

// maxReadChunk bounds one read of a transcript; maxLine bounds a line kept
// while waiting for its end.
const (
	maxReadChunk = 8 << 20
	maxLine      = 4 << 20
)

// read reads path from st's offset to its end and emits every complete
// line's record. The caller holds f.mu.
func (f *Follower) read(path string, st *followed) {
	// A transcript is the agent's file: open it as a regular file only (a
	// FIFO put in its place must not block the follower) and read in
	// bounded chunks, so one enormous write cannot take the console's memory.
	fh, err := jail.OpenRegular(path)
	if err != nil {
		return
	}
	defer fh.Close()
	if _, err := fh.Seek(st.offset, io.SeekStart); err != nil {
		f.lastErr = err
		return
	}
	data, err := io.ReadAll(io.LimitReader(fh, maxReadChunk))
	if err != nil {
		f.lastErr = err
	}
	st.offset += int64(len(data))
	if int64(len(data)) == maxReadChunk {
		defer f.read(path, st) // the rest, chunk by chunk
	}
	data = append(st.partial, data...)
	last := bytes.LastIndexByte(data, '\n')
	if last < 0 {
		if len(data) > maxLine {
			data = nil // no record is this long: skip to the next line
		}
		st.partial = data
		return
	}
	st.partial = append([]byte(nil), data[last+1:]...)
	for _, line := range bytes.Split(data[:last], []byte("\n")) {
		r, ok := st.parse(line)
		if !ok {
			continue
		}
		if r.MessageID != "" {
			if f.seen[r.MessageID] {
				continue
			}
			f.seen[r.MessageID] = true
		}
		f.emit(r)
	}
}

// Close stops following after reading every followed file (and any new
// one under root) to its end, so nothing written before Close is missed.
// It returns the last error met while following, if any.
func (f *Follower) Close() error {
	close(f.quit)
	<-f.done
	f.w.Close()
	var err error
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	if terr := f.addTree(f.root, false); terr != nil {
		err = errors.Join(err, terr)
	}
	for path, st := range f.files {
		f.read(path, st)
	}
	return errors.Join(err, f.lastErr)
}

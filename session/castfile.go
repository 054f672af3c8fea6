package session

import (
	"os"
	"path/filepath"
	"time"
)

// CastFile is an asciicast v2 recording open for writing, for output that
// does not come from a session: the console records its own screen this way.
type CastFile struct{ w *castWriter }

// CreateCastFile creates path (and its directory) and writes the header.
func CreateCastFile(path string, cols, rows int, now func() time.Time) (*CastFile, error) {
	if now == nil {
		now = time.Now
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	w, err := createCast(path, cols, rows, map[string]string{"TERM": "xterm-256color"}, now)
	if err != nil {
		return nil, err
	}
	return &CastFile{w: w}, nil
}

// Write records p as an "o" event. It never fails the caller: a recording
// error is returned by Close.
func (f *CastFile) Write(p []byte) (int, error) {
	f.w.event("o", p)
	return len(p), nil
}

// Resize records an "r" event.
func (f *CastFile) Resize(cols, rows int) { f.w.resize(cols, rows) }

// Close flushes and closes the file.
func (f *CastFile) Close() error { return f.w.Close() }

package main

import (
	"bytes"
	"io"
	"os"
	"sync/atomic"
	"testing"
)

// The console's output tells the idle trim of each frame of some size
// (not of a clock's tick), and a terminal
// stays a whole term.File through it (bubbletea sizes and enters raw mode
// only for one), with the terminal's own descriptor.
func TestNoteWritesKeepsATerminalAFile(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	var noted atomic.Int32
	out := noteWrites(w, func() { noted.Add(1) })
	f, ok := out.(ttyFile)
	if !ok {
		t.Fatalf("noteWrites(%T) is a %T, not a term.File", w, out)
	}
	if f.Fd() != w.Fd() {
		t.Fatalf("Fd() = %d, want the file's %d", f.Fd(), w.Fd())
	}
	if _, err := out.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	if _, err := r.Read(b); err != nil || b[0] != 'x' || noted.Load() != 0 {
		t.Fatalf("read %q (%v) after a one-byte write noted %d times, want 0", b, err, noted.Load())
	}
	frame := bytes.Repeat([]byte("y"), consoleBusyWrite)
	go func() { _, _ = out.Write(frame) }()
	got := make([]byte, len(frame))
	if _, err := io.ReadFull(r, got); err != nil || !bytes.Equal(got, frame) {
		t.Fatalf("read %d bytes (%v) of a frame", len(got), err)
	}

	var buf bytes.Buffer
	out = noteWrites(&buf, func() { noted.Add(1) })
	if _, ok := out.(ttyFile); ok {
		t.Fatalf("a buffer became a term.File")
	}
	_, _ = out.Write([]byte("ab"))
	_, _ = out.Write(frame)
	if buf.Len() != 2+len(frame) || noted.Load() != 2 {
		t.Fatalf("buffer holds %d bytes after two writes noted %d times in all, want %d and 2", buf.Len(), noted.Load(), 2+len(frame))
	}
}

package main

import (
	"bytes"
	"os"
	"testing"
)

// The console's output tells the idle trim of each write, and a terminal
// stays a whole term.File through it (bubbletea sizes and enters raw mode
// only for one), with the terminal's own descriptor.
func TestNoteWritesKeepsATerminalAFile(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	n := 0
	out := noteWrites(w, func() { n++ })
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
	if _, err := r.Read(b); err != nil || b[0] != 'x' || n != 1 {
		t.Fatalf("read %q (%v) after one write noted %d times", b, err, n)
	}

	var buf bytes.Buffer
	out = noteWrites(&buf, func() { n++ })
	if _, ok := out.(ttyFile); ok {
		t.Fatalf("a buffer became a term.File")
	}
	_, _ = out.Write([]byte("ab"))
	if buf.String() != "ab" || n != 2 {
		t.Fatalf("buffer holds %q after a write noted %d times in all, want \"ab\" and 2", buf.String(), n)
	}
}

package main

import (
	"io"
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// castRecorder tees the console's output to the terminal and to an
// asciicast v2 file, so a demo needs no external recorder.
type castRecorder struct {
	out  io.Writer
	cast *session.CastFile
}

func newCastRecorder(path string, out io.Writer) (*castRecorder, error) {
	cols, rows := 100, 30
	if f, ok := out.(*os.File); ok {
		if w, h, err := term.GetSize(f.Fd()); err == nil && w > 0 && h > 0 {
			cols, rows = w, h
		}
	}
	cast, err := session.CreateCastFile(path, cols, rows, nil)
	if err != nil {
		return nil, err
	}
	return &castRecorder{out: out, cast: cast}, nil
}

func (r *castRecorder) Write(p []byte) (int, error) {
	_, _ = r.cast.Write(p)
	return r.out.Write(p)
}

// Fd lets the program see the terminal behind the recorder, so it still
// sizes itself and enters raw mode.
func (r *castRecorder) Fd() uintptr {
	if f, ok := r.out.(*os.File); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// Read completes term.File: bubbletea treats an output as a terminal (and
// asks it for its size) only when it is a whole term.File, and without a
// size the console never draws. Nothing reads from it.
func (r *castRecorder) Read(p []byte) (int, error) {
	if f, ok := r.out.(*os.File); ok {
		return f.Read(p)
	}
	return 0, io.EOF
}

func (r *castRecorder) Close() error { return r.cast.Close() }

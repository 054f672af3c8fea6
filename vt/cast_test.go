package vt

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readCast returns an asciicast v2 recording's size and its output events.
func readCast(t *testing.T, path string) (cols, rows int, out []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	if !sc.Scan() {
		t.Fatalf("%s: no header", path)
	}
	var hdr struct{ Width, Height int }
	if err := json.Unmarshal(sc.Bytes(), &hdr); err != nil {
		t.Fatalf("%s: header: %v", path, err)
	}
	for sc.Scan() {
		var ev []any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if len(ev) == 3 && ev[1] == "o" {
			out = append(out, ev[2].(string))
		}
	}
	return hdr.Width, hdr.Height, out
}

// TestCastsAgainstTmux replays recordings of real programs (git log
// --color, less, vim with splits and syntax colours, top; Claude Code and
// the Codex CLI against the model stubs) into a tmux pane and into a
// Terminal, and
// compares every cell at several points of each recording, not only the
// end, so full-screen programs are compared while they are on screen.
func TestCastsAgainstTmux(t *testing.T) {
	needTmux(t)
	casts, err := filepath.Glob(filepath.Join("testdata", "casts", "*.cast"))
	if err != nil || len(casts) == 0 {
		t.Fatalf("no casts under testdata/casts: %v", err)
	}
	for _, path := range casts {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".cast"), func(t *testing.T) {
			cols, rows, events := readCast(t, path)
			const points = 8
			seen := map[int]bool{}
			for p := 1; p <= points; p++ {
				n := len(events) * p / points
				if n == 0 || seen[n] {
					continue
				}
				seen[n] = true
				var b strings.Builder
				for _, e := range events[:n] {
					b.WriteString(e)
				}
				ref := tmuxScreen(t, cols, rows, []byte(b.String()))
				term := New(cols, rows, DefaultHistory, nil)
				for _, e := range events[:n] {
					_, _ = term.Write([]byte(e))
				}
				if d := diffScreens(term, ref); len(d) > 0 {
					if len(d) > 20 {
						d = d[:20]
					}
					t.Errorf("after %d of %d events: differences from tmux:\n%s\nours:\n%s", n, len(events), strings.Join(d, "\n"), term.Text())
				}
			}
		})
	}
}

package vt

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestRecordCasts records the real-program casts under testdata/casts. It
// is not a test of the emulator: it runs only with VT_RECORD=1, to refresh
// the corpus the differential test replays (go test ./vt -run
// TestRecordCasts -v with VT_RECORD=1).
func TestRecordCasts(t *testing.T) {
	if os.Getenv("VT_RECORD") == "" {
		t.Skip("set VT_RECORD=1 to record the real-program casts")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	text := filepath.Join(t.TempDir(), "notes.txt")
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, "%03d the quick brown fox — café 日本語 \x1b[1mnot bold in a file\x1b[0m\t tab\n", i)
	}
	if err := os.WriteFile(text, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name       string
		cols, rows int
		argv       []string
		keys       []string
	}{
		{"git-log-color", 100, 30, []string{"git", "-C", root, "--no-pager", "log", "--color", "--graph", "--stat", "-n", "25", "3134a42"}, nil},
		{"less", 80, 24, []string{"less", "-R", text}, []string{" ", " ", "G", "g", "/café\r", "n", "q"}},
		{"vim", 80, 24, []string{"vim", "-u", "NONE", "-N", "-i", "NONE", text}, []string{
			":set number\r", "Go", "new line with 日本語 and café\x1b", "yy5p", ":split\r", "\x17w", "10j", "dd", ":syntax on\r", ":set hlsearch\r/fox\r", ":q!\r", ":q!\r"}},
		{"top", 100, 30, []string{"top", "-d", "0.3", "-n", "6"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if only := os.Getenv("VT_RECORD_ONLY"); only != "" && only != tc.name {
				t.Skip("VT_RECORD_ONLY=" + only)
			}
			cmd := exec.Command(tc.argv[0], tc.argv[1:]...)
			cmd.Env = append(os.Environ(), "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "COLUMNS=", "LINES=")
			f, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(tc.cols), Rows: uint16(tc.rows)})
			if err != nil {
				t.Skipf("%s: %v", tc.argv[0], err)
			}
			start := time.Now()
			type ev struct {
				at   float64
				data string
			}
			events := make(chan ev, 1024)
			done := make(chan struct{})
			go func() {
				defer close(done)
				buf := make([]byte, 32<<10)
				for {
					n, err := f.Read(buf)
					if n > 0 {
						events <- ev{time.Since(start).Seconds(), string(buf[:n])}
					}
					if err != nil {
						return
					}
				}
			}()
			var got []ev
			quiet := func() {
				for {
					select {
					case e := <-events:
						got = append(got, e)
					case <-time.After(400 * time.Millisecond):
						return
					case <-done:
						return
					}
				}
			}
			quiet()
			for _, k := range tc.keys {
				_, _ = f.Write([]byte(k))
				quiet()
			}
			_ = cmd.Wait()
			<-done
			close(events)
			for e := range events {
				got = append(got, e)
			}
			_ = f.Close()
			out, err := os.Create(filepath.Join("testdata", "casts", tc.name+".cast"))
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			hdr, _ := json.Marshal(map[string]any{"version": 2, "width": tc.cols, "height": tc.rows, "env": map[string]string{"TERM": "xterm-256color"}})
			fmt.Fprintf(out, "%s\n", hdr)
			for _, e := range got {
				line, _ := json.Marshal([]any{e.at, "o", e.data})
				fmt.Fprintf(out, "%s\n", line)
			}
			t.Logf("%s: %d events", tc.name, len(got))
		})
	}
}

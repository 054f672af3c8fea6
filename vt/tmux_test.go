package vt

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// This file is the differential harness: the same bytes go to a Terminal
// and to a detached tmux pane of the same size, and every cell (character,
// width, colours, attributes) and the cursor must match. tmux is the
// reference operators already trust.

// refCell is one cell as tmux shows it.
type refCell struct {
	text  string
	width int
	style Style
}

type refScreen struct {
	cells [][]refCell
	// used is how many cells of each row capture-pane printed: it trims
	// blank cells at the end of a row even when they have a background,
	// so those are compared by character only.
	used   []int
	cx, cy int
}

var tmuxSeq atomic.Int64

// needTmux skips without tmux, except in CI, where it must be installed.
func needTmux(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tmux is required in CI (installed by .ci/run)")
		}
		t.Skip("tmux is not installed; the differential tests compare against it")
	}
}

// tmuxScreen runs data through a fresh tmux pane of cols x rows and reads
// the pane back.
func tmuxScreen(t testing.TB, cols, rows int, data []byte) refScreen {
	t.Helper()
	return tmuxSteps(t, cols, rows, []step{{data: data}})
}

// step is output for the pane, then optionally a resize of it.
type step struct {
	data       []byte
	cols, rows int // resize to this after data, when not zero
}

// tmuxSteps runs the steps through a fresh tmux pane of cols x rows and
// reads the pane back at the end.
func tmuxSteps(t testing.TB, cols, rows int, steps []step) refScreen {
	t.Helper()
	all := tmuxEachStep(t, cols, rows, steps)
	return all[len(all)-1]
}

// tmuxEachStep runs the steps through a fresh tmux pane of cols x rows and
// reads the pane back after each step (after its resize, if any).
func tmuxEachStep(t testing.TB, cols, rows int, steps []step) []refScreen {
	t.Helper()
	dir := t.TempDir()
	sock := fmt.Sprintf("vtdiff-%d-%d", os.Getpid(), tmuxSeq.Add(1))
	tm := func(args ...string) (string, error) {
		cmd := exec.Command("tmux", append([]string{"-L", sock, "-f", "/dev/null"}, args...)...)
		cmd.Env = append(os.Environ(), "TMUX=")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() { _, _ = tm("kill-server") })
	// The pane's pty is raw, so tmux sees exactly the data (no \n to
	// \r\n). After each step a marker title, behind a CAN that ends any
	// unfinished sequence, says tmux has parsed everything before it; the
	// pane then waits for the go-ahead (after a resize) before the next.
	script := "stty raw -echo; "
	for i, st := range steps {
		in := filepath.Join(dir, fmt.Sprintf("in%d", i))
		if err := os.WriteFile(in, st.data, 0o600); err != nil {
			t.Fatal(err)
		}
		script += fmt.Sprintf("cat %q; printf '\\030\\033]2;vtdiff-%d\\033\\\\'; tmux wait-for go%d; ", in, i, i)
	}
	script += "exec sleep 100000"
	// A file, not -c: a run of many steps is longer than a tmux command.
	scriptFile := filepath.Join(dir, "script.sh")
	if err := os.WriteFile(scriptFile, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := tm("new-session", "-d", "-x", strconv.Itoa(cols), "-y", strconv.Itoa(rows), "-s", "d", "sh", scriptFile); err != nil {
		t.Fatalf("tmux new-session: %v: %s", err, out)
	}
	waitFor := func(format, want string) {
		deadline := time.Now().Add(60 * time.Second)
		for {
			out, err := tm("display", "-p", "-t", "d", format)
			if err == nil && strings.TrimSpace(out) == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("tmux never showed %s = %q (last %q, err %v)", format, want, out, err)
			}
			time.Sleep(10 * time.Millisecond) // polling a condition, not waiting a guess
		}
	}
	var screens []refScreen
	for i, st := range steps {
		waitFor("#{pane_title}", fmt.Sprintf("vtdiff-%d", i))
		if st.cols > 0 {
			if out, err := tm("resize-window", "-t", "d", "-x", strconv.Itoa(st.cols), "-y", strconv.Itoa(st.rows)); err != nil {
				t.Fatalf("resize-window: %v: %s", err, out)
			}
			waitFor("#{pane_width}x#{pane_height}", fmt.Sprintf("%dx%d", st.cols, st.rows))
			cols, rows = st.cols, st.rows
		}
		out, err := tm("capture-pane", "-p", "-e", "-N", "-t", "d")
		if err != nil {
			t.Fatalf("capture-pane: %v: %s", err, out)
		}
		ref := refScreen{}
		ref.cells, ref.used = parseCapture(out, cols, rows)
		pos, err := tm("display", "-p", "-t", "d", "#{cursor_x} #{cursor_y}")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Sscan(pos, &ref.cx, &ref.cy); err != nil {
			t.Fatalf("cursor %q: %v", pos, err)
		}
		screens = append(screens, ref)
		if i < len(steps)-1 {
			if out, err := tm("wait-for", "-S", fmt.Sprintf("go%d", i)); err != nil {
				t.Fatalf("wait-for: %v: %s", err, out)
			}
		}
	}
	return screens
}

// parseCapture reads capture-pane -p -e -N output into cells.
func parseCapture(out string, cols, rows int) ([][]refCell, []int) {
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	grid := make([][]refCell, rows)
	used := make([]int, rows)
	// capture-pane carries its SGR and SO state from line to line.
	acs := false
	var st Style
	for y := range grid {
		row := make([]refCell, 0, cols)
		if y < len(lines) {
			s := lines[y]
			for len(s) > 0 {
				// Line-drawing characters come between SO and SI.
				if s[0] == 0x0e || s[0] == 0x0f {
					acs = s[0] == 0x0e
					s = s[1:]
					continue
				}
				if s[0] == 0x1b {
					seq, _, n, _ := ansi.DecodeSequence(s, ansi.NormalState, nil)
					if strings.HasPrefix(seq, "\x1b[") && strings.HasSuffix(seq, "m") {
						applySGR(&st, parseParams(seq[2:len(seq)-1]))
					}
					s = s[n:]
					continue
				}
				r, size := utf8.DecodeRuneInString(s)
				text := s[:size]
				s = s[size:]
				if acs && r >= 0x5f && r <= 0x7e {
					r = decGraphics[r-0x5f]
					text = string(r)
				}
				w := runeWidth(r)
				for len(s) > 0 {
					r2, s2 := utf8.DecodeRuneInString(s)
					if runeWidth(r2) != 0 || r2 < 0x20 {
						break
					}
					text += s[:s2]
					s = s[s2:]
				}
				row = append(row, refCell{text: text, width: w, style: st})
				if w == 2 {
					row = append(row, refCell{width: 0, style: st})
				}
			}
		}
		used[y] = len(row)
		for len(row) < cols {
			row = append(row, refCell{text: " ", width: 1})
		}
		grid[y] = row[:cols]
	}
	return grid, used
}

func parseParams(s string) ansi.Params {
	var ps []ansi.Param
	if s == "" {
		return nil
	}
	cur := ""
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ';' || s[i] == ':' {
			v := int(-1 &^ (1 << 31)) // missing
			if cur != "" {
				v, _ = strconv.Atoi(cur)
			}
			p := ansi.Param(v)
			if v < 0 || cur == "" {
				p = ansi.Param(0x7fffffff)
			}
			if i < len(s) && s[i] == ':' {
				p |= ansi.Param(1 << 31)
			}
			ps = append(ps, p)
			cur = ""
			continue
		}
		cur += string(s[i])
	}
	return ps
}

// diffScreens lists the cells and cursor where term differs from ref.
func diffScreens(term *Terminal, ref refScreen) []string {
	var diffs []string
	for y := range term.rows {
		for x := range term.cols {
			text, w, st := term.CellAt(x, y)
			r := ref.cells[y][x]
			if w == 0 {
				text = ""
			}
			if x >= ref.used[y] {
				st = r.style // beyond what capture-pane prints: character only
			}
			if text != r.text || w != r.width || st != r.style {
				diffs = append(diffs, fmt.Sprintf("(%d,%d): ours %q w%d %+v, tmux %q w%d %+v", x, y, text, w, st, r.text, r.width, r.style))
			}
		}
	}
	if term.cur.x != ref.cx || term.cur.y != ref.cy {
		diffs = append(diffs, fmt.Sprintf("cursor: ours (%d,%d), tmux (%d,%d)", term.cur.x, term.cur.y, ref.cx, ref.cy))
	}
	return diffs
}

// checkAgainstTmux feeds data to both in chunks of chunk bytes (0: one
// write) and fails on any differing cell.
func checkAgainstTmux(t *testing.T, cols, rows int, data []byte, chunk int) {
	t.Helper()
	ref := tmuxScreen(t, cols, rows, data)
	term := New(cols, rows, DefaultHistory, nil)
	feed(term, data, chunk)
	if d := diffScreens(term, ref); len(d) > 0 {
		if len(d) > 20 {
			d = append(d[:20], fmt.Sprintf("... and %d more", len(d)-20))
		}
		t.Errorf("%d differences from tmux at %dx%d:\n%s\nours:\n%s", len(d), cols, rows, strings.Join(d, "\n"), term.Text())
	}
}

func feed(term *Terminal, data []byte, chunk int) {
	if chunk <= 0 {
		chunk = len(data)
	}
	for off := 0; off < len(data); off += chunk {
		_, _ = term.Write(data[off:min(off+chunk, len(data))])
	}
}

var _ = bytes.Equal

package vt

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// This file is the second reference of the differential harness: xterm.js
// headless (@xterm/headless from npm, the emulator of VS Code's terminal),
// run by the machine's node. tmux settles what tmux users see; where tmux
// and xterm disagree on a sequence, xterm's behaviour decides, and the test
// that follows it says so. .ci/install-xterm.sh installs the pinned
// version outside the repository and names it in ORCHESTRA_XTERM_HEADLESS.

// xtermPrefix returns the npm prefix @xterm/headless is installed under,
// or skips: the tests need node and the package.
func xtermPrefix(t testing.TB) string {
	t.Helper()
	named := os.Getenv("ORCHESTRA_XTERM_HEADLESS")
	if _, err := exec.LookPath("node"); err != nil {
		if named != "" {
			t.Fatal("ORCHESTRA_XTERM_HEADLESS is set but node is not installed")
		}
		t.Skip("node is not installed; the xterm.js reference needs it")
	}
	prefix := named
	if prefix == "" {
		cache := os.Getenv("XDG_CACHE_HOME")
		if cache == "" {
			home, _ := os.UserHomeDir()
			cache = filepath.Join(home, ".cache")
		}
		prefix = filepath.Join(cache, "orchestra-tui", "_xterm_headless_"+xtermVersion)
	}
	if _, err := os.Stat(filepath.Join(prefix, "node_modules", "@xterm", "headless", "package.json")); err != nil {
		if named != "" { // CI names what .ci/install-xterm.sh installed
			t.Fatalf("ORCHESTRA_XTERM_HEADLESS=%s has no @xterm/headless: %v", named, err)
		}
		t.Skipf("@xterm/headless is not installed under %s (bash .ci/install-xterm.sh installs it)", prefix)
	}
	return prefix
}

// xtermVersion is the @xterm/headless the reference runs; keep it equal to
// .ci/install-xterm.sh's.
const xtermVersion = "6.0.0"

// xtermCase is one screen for xterm.js to draw.
type xtermCase struct {
	Cols int    `json:"cols"`
	Rows int    `json:"rows"`
	Data string `json:"data"`
}

// xtermRef is a screen as xterm.js drew it.
type xtermRef struct {
	Rows   [][][2]any `json:"rows"`
	CX, CY int
}

// xtermScreens runs each data through a fresh xterm.js terminal of cols x
// rows, all in one node process, and returns the screens.
func xtermScreens(t testing.TB, cols, rows int, datas [][]byte) []xtermRef {
	t.Helper()
	prefix := xtermPrefix(t)
	cases := make([]xtermCase, len(datas))
	for i, d := range datas {
		cases[i] = xtermCase{Cols: cols, Rows: rows, Data: base64.StdEncoding.EncodeToString(d)}
	}
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join("testdata", "xterm", "screens.js"), prefix)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node screens.js: %v: %s", err, stderr.String())
	}
	var raw []struct {
		Rows   [][][2]any `json:"rows"`
		CX, CY int
	}
	if err := json.Unmarshal(out, &raw); err != nil {
		t.Fatalf("screens.js output: %v", err)
	}
	refs := make([]xtermRef, len(raw))
	for i, r := range raw {
		refs[i] = xtermRef{Rows: r.Rows, CX: r.CX, CY: r.CY}
	}
	return refs
}

// diffXterm lists the cells (text and width) and the cursor where term
// differs from xterm.js. Colours are tmux's to check.
func diffXterm(term *Terminal, ref xtermRef) []string {
	var diffs []string
	for y := range term.rows {
		for x := range term.cols {
			text, w, _ := term.CellAt(x, y)
			if w == 0 {
				text = ""
			}
			rt, _ := ref.Rows[y][x][0].(string)
			rw, _ := ref.Rows[y][x][1].(float64)
			if text != rt || w != int(rw) {
				diffs = append(diffs, fmt.Sprintf("(%d,%d): ours %q w%d, xterm.js %q w%d", x, y, text, w, rt, int(rw)))
			}
		}
	}
	if !term.autowrap && ref.CX == term.cols {
		// xterm's rule: without autowrap (DECAWM reset) the cursor stays in
		// the last column. xterm.js keeps its column one past it, which
		// only its cursor report shows: the next character still lands in
		// the last column.
		ref.CX = term.cols - 1
	}
	if term.cur.x != ref.CX || term.cur.y != ref.CY {
		diffs = append(diffs, fmt.Sprintf("cursor: ours (%d,%d), xterm.js (%d,%d)", term.cur.x, term.cur.y, ref.CX, ref.CY))
	}
	return diffs
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/ui"
)

// formHarnesses lists the configured harnesses for the console's new-task
// form, each with whether its program is installed: on PATH, at the path
// its argv names (relative to the repository), or this binary itself.
func formHarnesses(cfg config.Config, root string) []ui.HarnessInfo {
	names := make([]string, 0, len(cfg.Harness))
	for n := range cfg.Harness {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]ui.HarnessInfo, 0, len(names))
	for _, n := range names {
		out = append(out, ui.HarnessInfo{Name: n, Found: installed(cfg.Harness[n].Argv, root)})
	}
	return out
}

func installed(argv []string, root string) bool {
	if len(argv) == 0 {
		return false
	}
	prog := argv[0]
	switch {
	case strings.HasPrefix(prog, "{{"):
		return true // {{self}}: this binary
	case strings.Contains(prog, "/"):
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(root, prog)
		}
		fi, err := os.Stat(prog)
		return err == nil && !fi.IsDir()
	}
	_, err := exec.LookPath(prog)
	return err == nil
}

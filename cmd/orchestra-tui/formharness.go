package main

import (
	"os"
	"sort"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/ui"
)

// formHarnesses lists the configured harnesses for the console's new-task
// form, each with whether its program is installed, told as the engine
// tells it before it leases a task (session.ProgramMissing).
func formHarnesses(cfg config.Config, root string) []ui.HarnessInfo {
	names := make([]string, 0, len(cfg.Harness))
	for n := range cfg.Harness {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]ui.HarnessInfo, 0, len(names))
	for _, n := range names {
		spec := cfg.Harness[n].Expand(harnessVars(""))
		out = append(out, ui.HarnessInfo{Name: n, Found: session.ProgramMissing(spec, os.Environ(), root) == ""})
	}
	return out
}

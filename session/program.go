package session

import (
	"fmt"
	"path/filepath"
	"strings"
)

// installHints says how to install the program of each built-in agent
// harness, keyed by the program's name (argv[0]); the packages are the
// ones .ci/install-agents.sh installs.
var installHints = map[string]string{
	"claude":   "npm install -g @anthropic-ai/claude-code",
	"codex":    "npm install -g @openai/codex",
	"gemini":   "npm install -g @google/gemini-cli",
	"opencode": "npm install -g opencode-ai",
}

// ProgramMissing says, in a sentence for the operator, that the program of
// spec (argv already expanded) cannot be found where a session of it would
// look: on the PATH of the session's scrubbed environment, or at the path
// argv names. It says what to install when the program is a known agent
// CLI. It returns "" when the program is found, and also when it cannot
// be told before a launch: an argv[0] relative to the worktree, or one
// with a placeholder left unfilled.
func ProgramMissing(spec Spec, environ []string, dir string) string {
	if len(spec.Argv) == 0 || strings.Contains(spec.Argv[0], "{{") {
		return ""
	}
	prog := spec.Argv[0]
	if strings.Contains(prog, "/") && !filepath.IsAbs(prog) {
		return "" // relative to the worktree, which does not exist yet
	}
	if _, err := Resolve(spec, environ, dir); err == nil {
		return ""
	}
	what := fmt.Sprintf("The program %q of harness %s is not on the PATH its sessions get on this machine", prog, spec.Name)
	if strings.Contains(prog, "/") {
		what = fmt.Sprintf("The program %s of harness %s does not exist or is not executable on this machine", prog, spec.Name)
	}
	fix := "install it or put it on PATH"
	if h, ok := installHints[filepath.Base(prog)]; ok {
		fix = "install it (" + h + ")"
	}
	return what + "; " + fix + "."
}

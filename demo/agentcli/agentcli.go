// Package agentcli finds the agent CLIs (other than Claude Code, see
// package claudecli) that the demo and the real-CLI tests run, in one
// place: an ORCHESTRA_<NAME>_BIN variable (which .ci/install-agents.sh
// prints), then the command on PATH.
package agentcli

import (
	"fmt"
	"os"
	"os/exec"
)

// CLI is one agent CLI that tests may run.
type CLI struct {
	// Name is what the operator calls it, e.g. "Codex CLI".
	Name string
	// Command is the binary's name on PATH.
	Command string
	// Package is the npm package that installs it.
	Package string
	// BinEnv names the variable that points at the binary.
	BinEnv string
}

// The agent CLIs the tests know.
var (
	Codex    = CLI{Name: "Codex CLI", Command: "codex", Package: "@openai/codex", BinEnv: "ORCHESTRA_CODEX_BIN"}
	Gemini   = CLI{Name: "Gemini CLI", Command: "gemini", Package: "@google/gemini-cli", BinEnv: "ORCHESTRA_GEMINI_BIN"}
	OpenCode = CLI{Name: "opencode", Command: "opencode", Package: "opencode-ai", BinEnv: "ORCHESTRA_OPENCODE_BIN"}
)

// Find returns the CLI's binary, or an error that says how to get one.
func (c CLI) Find() (string, error) {
	if bin := os.Getenv(c.BinEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s=%s: %w", c.BinEnv, bin, err)
		}
		return bin, nil
	}
	bin, err := exec.LookPath(c.Command)
	if err != nil {
		return "", fmt.Errorf("the %s is not on PATH: install it (npm install -g %s, or .ci/install-agents.sh) or set %s",
			c.Name, c.Package, c.BinEnv)
	}
	return bin, nil
}

// Require returns the CLI for a test that runs it. Without one it skips the
// test, except in CI, where .ci/run installs the CLI and a missing one must
// fail rather than pass as a skip.
func (c CLI) Require(t TB) string {
	t.Helper()
	bin, err := c.Find()
	if err != nil {
		msg := c.Name + " not installed: " + err.Error()
		if os.Getenv("CI") != "" {
			t.Fatal(msg + " (CI must run the real-CLI tests)")
		}
		t.Skip(msg)
	}
	return bin
}

// TB is what Require uses of a test: testing.TB, which it takes without
// importing package testing. The binary links this package (the demo
// finds its agents here), and importing testing would link that package,
// and its init, into every process of it.
type TB interface {
	Helper()
	Fatal(args ...any)
	Skip(args ...any)
}

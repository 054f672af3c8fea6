// Package claudecli finds the Claude Code CLI that the demo, the model stub
// and the end-to-end tests run, in one place: ORCHESTRA_CLAUDE_BIN (which
// .ci/install-claude.sh prints), then "claude" on PATH.
package claudecli

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// BinEnv names the Claude Code binary to run.
const BinEnv = "ORCHESTRA_CLAUDE_BIN"

// Find returns the Claude Code CLI to run, or an error that says how to get
// one.
func Find() (string, error) {
	if bin := os.Getenv(BinEnv); bin != "" {
		if _, err := os.Stat(bin); err != nil {
			return "", fmt.Errorf("%s=%s: %w", BinEnv, bin, err)
		}
		return bin, nil
	}
	bin, err := exec.LookPath("claude")
	if err != nil {
		return "", errors.New("the Claude Code CLI is not on PATH: install it (npm install -g @anthropic-ai/claude-code, or .ci/install-claude.sh) or set " + BinEnv)
	}
	return bin, nil
}

// Require returns the CLI for a test that runs it. Without one it skips the
// test, except in CI, where .ci/run installs the CLI and a missing one must
// fail rather than pass as a skip.
func Require(t TB) string {
	t.Helper()
	bin, err := Find()
	if err != nil {
		msg := "Claude Code CLI not installed: " + err.Error()
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

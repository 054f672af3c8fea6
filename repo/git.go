package repo

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// stderrCap bounds how much of git's stderr an error carries, so one noisy
// failure cannot flood the operator's event log.
const stderrCap = 2048

// commandError is a failed git command: where it ran, what it was, and what
// git said. Its message is meant for the operator.
type commandError struct {
	dir    string
	args   []string
	stderr string
	err    error
}

func (e *commandError) Error() string {
	msg := fmt.Sprintf("git %s (in %s) failed", strings.Join(e.args, " "), e.dir)
	if e.stderr != "" {
		msg += ": " + e.stderr
	}
	return msg + ": " + e.err.Error()
}

func (e *commandError) Unwrap() error { return e.err }

// exitCode returns git's exit status, or -1 when err is not an exit.
func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}

// repoScopedEnv are variables that point git at a particular repository or
// index. A console started from inside a git hook (or a test run under
// `git rebase -x`) inherits them, and every command below would then act on
// the wrong repository, so they are dropped.
var repoScopedEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
	"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_PREFIX",
	"GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES",
}

// gitEnviron is the environment of every git command: the user's own (so
// their config, credentials helpers and ssh keys keep working) minus the
// repository-scoped variables, plus settings that make git safe to run
// unattended and parseable.
func gitEnviron() []string {
	env := make([]string, 0, len(os.Environ())+4)
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		drop := false
		for _, s := range repoScopedEnv {
			if name == s {
				drop = true
				break
			}
		}
		if name == "LC_ALL" || name == "GIT_TERMINAL_PROMPT" || name == "GIT_OPTIONAL_LOCKS" {
			drop = true
		}
		if !drop {
			env = append(env, kv)
		}
	}
	return append(env,
		// Never wait for a password nobody is there to type.
		"GIT_TERMINAL_PROMPT=0",
		// Messages we match on and show are in one language.
		"LC_ALL=C",
		// Status and diff would otherwise take index.lock to refresh stat
		// data, racing the agent's own git commands in the same worktree.
		"GIT_OPTIONAL_LOCKS=0",
	)
}

// run executes git with exactly args (no shell) in dir and returns stdout.
// A failure is a *commandError naming dir, the command and git's stderr.
func run(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnviron()
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > stderrCap {
			msg = msg[:stderrCap] + "…"
		}
		return stdout.Bytes(), &commandError{dir: dir, args: args, stderr: msg, err: err}
	}
	return stdout.Bytes(), nil
}

// runLine runs git and returns its stdout with surrounding space trimmed.
func runLine(dir string, args ...string) (string, error) {
	out, err := run(dir, args...)
	return strings.TrimSpace(string(out)), err
}

// splitNUL splits -z output into its fields, dropping the trailing empty one.
func splitNUL(b []byte) []string {
	s := strings.TrimSuffix(string(b), "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}

// checkArg refuses a value that git would parse as an option. Refs, remotes
// and revisions handed to us come from task data, not from a trusted hand.
func checkArg(what, v string) error {
	if v == "" {
		return fmt.Errorf("%s is empty", what)
	}
	if strings.HasPrefix(v, "-") {
		return fmt.Errorf("%s %q starts with '-' and would be read by git as an option", what, v)
	}
	return nil
}

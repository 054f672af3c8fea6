package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/probe"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// harness list shows every harness, built in or from orchestra.toml, and
// whether its program is there.
func TestHarnessListNamesSourceAndBinary(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte(`
[harness.nowhere]
argv = ["no-such-agent-cli-xyz"]
ready = '(?m)^>'

[harness.claude]
quiet = "2s"
`), 0o644))
	code, stdout, stderr := cli(t, "harness", "list", "-C", root)
	require.Equal(t, 0, code, stderr)
	for _, want := range []string{
		`(?m)^nowhere\s+orchestra.toml\s+type\s+not on PATH \(no-such-agent-cli-xyz\)$`,
		`(?m)^claude\s+built in, changed in orchestra.toml\s+type\s`,
		`(?m)^claude-print\s+built in\s+arg\s`,
		`(?m)^shell\s+built in\s+file\s+/bin/sh$`,
		`(?m)^codex\s+built in\s`,
	} {
		require.Regexp(t, regexp.MustCompile(want), stdout)
	}
}

// harness check is green on a program that shows its prompt, settles,
// echoes and takes the submit key, and exits 1 on one whose ready marker
// never shows.
func TestHarnessCheckReportsAndExits(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte(`
[harness.echoer]
argv = ["/bin/sh", "-c", "printf 'ready> '; read line; echo \"got: $line\"; sleep 30"]
ready = 'ready>'
quiet = "100ms"

[harness.mute]
argv = ["/bin/sh", "-c", "echo starting; sleep 30"]
ready = 'ready>'
launch_timeout = "1s"
`), 0o644))
	code, stdout, stderr := cli(t, "harness", "check", "echoer", "-C", root, "--idle", "300ms")
	require.Equal(t, 0, code, stdout+stderr)
	require.Contains(t, stdout, "✓ ready    the ready marker matched after")
	require.Contains(t, stdout, "✓ submit   the submit key")
	require.Contains(t, stdout, "green:")

	code, stdout, _ = cli(t, "harness", "check", "-C", root, "--json", "mute")
	require.Equal(t, 1, code)
	var rep probe.Report
	require.NoError(t, json.Unmarshal([]byte(stdout), &rep), stdout)
	require.False(t, rep.Green())
	require.Contains(t, rep.Screen, "starting")

	code, _, stderr = cli(t, "harness", "check", "-C", root, "nosuch")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, `no harness named "nosuch"`)
	code, _, _ = cli(t, "harness", "check", "-C", root)
	require.Equal(t, 2, code)
}

// `run --headless` with one-shot agents configured the README's way (argv
// and delivery only: no env, no ready marker) ends instead of hanging: a
// valid artifact and the sentinel finish the phase even when the agent
// exits non-zero, and one that leaves nothing is a dead end that fails.
func TestRunHeadlessWithOneShotAgentsEnds(t *testing.T) {
	t.Parallel()
	fix := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(fix, "calc.go"), []byte(project.CalcFixed), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(fix, "implement.json"), []byte(task.Example(task.PhaseImplement)), 0o644))
	for name, c := range map[string]struct {
		body string
		code int
		want string
	}{
		"sealed, exit 3": {`cp "$FIX/calc.go" calc.go && cp "$FIX/implement.json" .orchestra/ && touch .orchestra/done; exit 3`, 0, "exited with code 3 after writing it"},
		"nothing left":   {`exit 0`, 1, "without writing .orchestra/done"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			root := calcRepo(t)
			script := "FIX=" + fix + "\n" + c.body
			toml := "[harness.oneshot]\nargv = [\"/bin/sh\", \"-c\", " + strconv.Quote(script) + ", \"oneshot\"]\ndelivery = \"arg\"\n\n[lease]\nmax_attempts = 1\n"
			require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte(toml), 0o644))
			code, _, stderr := cli(t, "add", "-C", root, "--goal", "fix calc", "--verify", project.VerifyCommand,
				"--harness", "oneshot", "--pipeline", "implement")
			require.Equal(t, 0, code, stderr)
			code, stdout, stderr := cli(t, "run", "--headless", "-C", root)
			require.Equal(t, c.code, code, stdout+stderr)
			require.Contains(t, stdout, c.want)
		})
	}
}

// harness check says before it runs that it sends one request to the
// model, and --no-model leaves the submit out; a program that stops at one
// of its dialogs fails at once with the dialog's text and advice that
// answers the dialog, not an edit of orchestra.toml.
func TestHarnessCheckNamesTheModelRequestAndTheDialog(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte(`
[harness.echoer]
argv = ["/bin/sh", "-c", "printf 'ready> '; read line; echo \"got: $line\"; sleep 30"]
ready = 'ready>'
quiet = "100ms"

[harness.asker]
argv = ["/bin/sh", "-c", "echo 'Update available: press enter to install'; sleep 30"]
ready = 'ready>'
dialogs = ["update: Update available"]
`), 0o644))
	code, stdout, stderr := cli(t, "harness", "check", "echoer", "-C", root, "--idle", "300ms")
	require.Equal(t, 0, code, stdout+stderr)
	require.Contains(t, stdout, "note: this check sends one short request to the model")
	require.Contains(t, stdout, "--no-model leaves it out")

	code, stdout, stderr = cli(t, "harness", "check", "echoer", "-C", root, "--idle", "300ms", "--no-model")
	require.Equal(t, 0, code, stdout+stderr)
	require.NotContains(t, stdout, "note: this check sends")
	require.Contains(t, stdout, "· submit   not sent (--no-model)")

	code, stdout, _ = cli(t, "harness", "check", "asker", "-C", root)
	require.Equal(t, 1, code, stdout)
	require.Contains(t, stdout, "✗ ready    the program stopped at its update dialog")
	require.Contains(t, stdout, "Update available: press enter to install")
	require.Contains(t, stdout, "not green (ready): run /bin/sh once yourself and answer its update screen")
	require.NotContains(t, stdout, "fix what is marked ✗")
}

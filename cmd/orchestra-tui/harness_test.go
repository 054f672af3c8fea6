package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/probe"
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

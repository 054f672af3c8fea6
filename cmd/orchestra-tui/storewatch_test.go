package main

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
)

// The store deleted in the middle of a headless run: the run ends at once,
// non-zero, with one message naming the store and what to do, and reports
// no verdict.
func TestHeadlessRunFailsWhenTheStoreIsDeleted(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte(`
[harness.staller]
argv = ["/bin/sh", "-c", "printf 'staller> '; read -r line; echo working; exec sleep 600"]
env = ["PATH"]
ready = "staller>"
submit = "\r"
quiet = "100ms"
`), 0o644))
	code, _, stderr := cli(t, "add", "-C", root, "--title", "t", "--goal", "g", "--verify", "true",
		"--harness", "staller", "--pipeline", "implement")
	require.Equal(t, 0, code, stderr)

	pr, pw := io.Pipe()
	var errb strings.Builder
	done := make(chan int, 1)
	go func() {
		done <- run([]string{"run", "--headless", "-C", root}, nil, pw, &errb)
		pw.Close()
	}()
	var out strings.Builder
	sc := bufio.NewScanner(pr)
	deleted := false
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if !deleted && strings.Contains(line, "brief.delivered") {
			deleted = true
			db := sqlite.DefaultPath(root)
			for _, suffix := range []string{"", "-wal", "-shm"} {
				require.NoError(t, os.Remove(db+suffix))
			}
		}
	}
	var got int
	select {
	case got = <-done:
	case <-time.After(60 * time.Second):
		t.Fatalf("the run did not end:\n%s", out.String())
	}
	require.True(t, deleted, out.String())
	require.Equal(t, 1, got, out.String())
	text := out.String() + errb.String()
	require.Contains(t, text, "orchestra-tui: The store "+sqlite.DefaultPath(root)+" was deleted")
	require.Contains(t, text, "Placement has stopped")
	require.NotContains(t, text, "verdict")
}

package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/notify"
)

// An operator away from the screen hears about a task that needs them: when
// a task fails, the console rings the terminal's bell (tmux flags the
// window) and the engine runs the `[notify] command` with the event as
// JSON.
func TestNotifyWhenATaskNeedsAHuman(t *testing.T) {
	parallel(t)
	notices := filepath.Join(t.TempDir(), "notices.jsonl")
	cmd, err := json.Marshal([]string{"sh", "-c", "cat >> " + shellQuote(notices)})
	require.NoError(t, err)
	// The agent does nothing, so the gate stays red and, with one attempt
	// allowed, the task fails: it needs a human to retry it.
	f := newFixture(t, agent.Script{}, fmt.Sprintf("[lease]\nmax_attempts = 1\n\n[notify]\ncommand = %s\n", cmd))
	f.addTask(t, "Fix calc", "implement")

	tm := f.console(t)
	tm.waitText(30*time.Second, "Fix calc")
	require.Equal(t, "0", bellFlag(tm), "no bell before anything needs a human")
	tm.waitText(3*time.Minute, "failed")
	tm.waitScreen("the bell", 10*time.Second, func(string) bool { return bellFlag(tm) == "1" })

	var got []notify.Notice
	require.Eventually(t, func() bool {
		got = readNotices(t, notices)
		return len(got) > 0
	}, 30*time.Second, lookInterval, "the notify command ran")
	require.Len(t, got, 1, "one notice: the failure")
	require.Equal(t, notify.KindFailed, got[0].Kind)
	require.Equal(t, "Fix calc", got[0].Title)
	require.NotEmpty(t, got[0].TaskID)
	require.Contains(t, f.orch(t, "status"), string(got[0].TaskID), "its id is the task's, as status shows it")
	tm.keys("q")
	tm.waitText(10*time.Second, "console exited with status 0")
}

func bellFlag(tm *tmuxTerm) string {
	return strings.TrimSpace(tm.run("display-message", "-p", "-t", "main", "#{window_bell_flag}"))
}

func readNotices(t *testing.T, path string) []notify.Notice {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []notify.Notice
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var n notify.Notice
		require.NoError(t, json.Unmarshal(sc.Bytes(), &n), "a notice is one JSON object per line: %s", sc.Bytes())
		out = append(out, n)
	}
	return out
}

package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/dirwatch"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// 200 concurrent sessions, each with its usage follower as the coordinator
// starts one for Claude Code (its transcripts under one config directory
// shared by all), stay within one inotify instance (a user has 128 by
// default: one per session failed the 128th launch, one per session and
// one per follower the 64th), and each still hears about its own
// directories: a sentinel written in one of them is refused for that
// session (no artifact), and for no other; a transcript line written for
// one of them is counted by its follower, and by no other.
func TestTwoHundredSessionsShareOneInotifyInstance(t *testing.T) {
	const n = 200
	spec := session.Spec{
		Name: "idle", Argv: []string{"/bin/sh", "-c", "printf 'idle> '; exec sleep 600"}, Env: []string{"PATH"},
		Delivery: session.DeliveryType, Ready: "idle>", Submit: `\r`,
		Quiet: session.Duration{Duration: 50 * time.Millisecond}, LaunchTimeout: session.Duration{Duration: time.Minute},
	}
	reports := make(chan Report, 16*n)
	gone := make(chan struct{})
	defer close(gone)
	runs := make([]*Run, n)
	dirs := make([]string, n)
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, r := range runs {
			if r != nil {
				wg.Go(func() { _ = r.Stop(0) })
			}
		}
		wg.Wait()
	})
	for i := range n {
		dirs[i] = t.TempDir()
		r, err := Start(context.Background(), Params{
			TaskID: task.ID(fmt.Sprintf("T%03d", i)), SessionID: fmt.Sprintf("S%03d", i), Phase: task.PhasePlan,
			Spec: spec, Dir: dirs[i], Cols: 40, Rows: 5, Environ: []string{"PATH=" + os.Getenv("PATH")},
			SampleEvery: time.Minute, Settle: 20 * time.Millisecond, Reports: reports, Gone: gone,
		})
		require.NoError(t, err, "session %d", i)
		runs[i] = r
	}
	require.Equal(t, 1, dirwatch.Instances(), "200 sessions, one inotify instance")

	// One usage follower per session, as coord.startMeter makes them.
	conf := filepath.Join(t.TempDir(), ".claude")
	projects := filepath.Join(conf, "projects")
	type counted struct {
		i   int
		rec usage.Record
	}
	records := make(chan counted, n)
	for i := range n {
		project := usage.ClaudeProjectDir(conf, dirs[i])
		if i%2 == 0 { // half the conversations exist before their follower
			require.NoError(t, os.MkdirAll(project, 0o700))
		}
		f, err := usage.Follow(projects,
			func(path string) bool { return strings.HasPrefix(path, project+string(filepath.Separator)) },
			func(r usage.Record) { records <- counted{i, r} })
		require.NoError(t, err, "follower %d", i)
		t.Cleanup(func() { _ = f.Close() })
	}
	require.Equal(t, 1, dirwatch.Instances(), "200 sessions and 200 usage followers, one inotify instance")

	const talker = 61 // its project directory is made after its follower started
	project := usage.ClaudeProjectDir(conf, dirs[talker])
	require.NoError(t, os.MkdirAll(project, 0o700))
	line := `{"type":"assistant","message":{"id":"msg_1","model":"claude-test","usage":{"input_tokens":7,"output_tokens":3}}}` + "\n"
	require.NoError(t, os.WriteFile(filepath.Join(project, "conv.jsonl"), []byte(line), 0o600))
	select {
	case c := <-records:
		require.Equal(t, talker, c.i, "another session's follower counted the line")
		require.Equal(t, int64(7), c.rec.Tokens.Input)
	case <-time.After(time.Minute):
		t.Fatal("the session's follower never counted its transcript line")
	}

	const pick = 137
	require.NoError(t, os.WriteFile(filepath.Join(dirs[pick], filepath.FromSlash(task.SentinelPath)), nil, 0o600))
	deadline := time.After(time.Minute)
	for {
		select {
		case rep := <-reports:
			if rep.Kind != Refused {
				continue
			}
			require.Equal(t, task.ID(fmt.Sprintf("T%03d", pick)), rep.TaskID, "another session heard the sentinel")
			require.Equal(t, task.ReasonArtifactMissing, rep.Refusal.Reason)
			return
		case <-deadline:
			t.Fatal("the session never heard its sentinel")
		}
	}
}

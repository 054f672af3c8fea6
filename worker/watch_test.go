package worker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// The sentinel beside a valid artifact finishes the phase, but only once
// the state directory has been quiet for Settle and the screen for the
// harness's quiet period: an agent still talking is never cut off.
func TestSentinelFinishesThePhaseOnceTheScreenIsQuiet(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sr := startStub(t, nil)
		sr.Send(Input{Kind: InputBrief, Text: "the brief"})
		sr.nextKind(t, InputDelivered)
		artifact := task.Example(task.PhaseImplement)
		sr.write(t, task.ArtifactPath(task.PhaseImplement), artifact)
		sr.write(t, task.SentinelPath, "")
		wrote := time.Now()
		// The agent goes on talking for a second after it wrote them.
		go func() {
			for i := range 10 {
				time.Sleep(100 * time.Millisecond)
				sr.sess.draw("still talking " + string(rune('0'+i)))
			}
		}()
		rep, _ := sr.nextKind(t, PhaseFinished)
		require.Equal(t, artifact, string(rep.Artifact))
		require.False(t, rep.AfterExit)
		took := rep.At.Sub(wrote)
		require.GreaterOrEqual(t, took, time.Second+200*time.Millisecond, "finished %s after the sentinel, before the screen was quiet", took)
		require.Less(t, took, time.Second+2*200*time.Millisecond+100*time.Millisecond)
		synctest.Wait()
		require.Empty(t, sr.reports, "finished once")
	})
}

// A sentinel whose artifact is missing or invalid is refused: the reason
// is reported, the refusal is typed into the pane (after the brief), and
// the sentinel is removed so that the fixed artifact is announced again;
// the fixed one then finishes the phase.
func TestSentinelWithABadArtifactIsRefusedUntilFixed(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		artifact string // "" writes none
		reason   task.Reason
	}{
		"missing":  {"", task.ReasonArtifactMissing},
		"not json": {"it is done", task.ReasonArtifactNotJSON},
		"schema":   {`{"summary": 1}`, task.ReasonArtifactSchema},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sr := startStub(t, nil)
				sr.Send(Input{Kind: InputBrief, Text: "the brief"})
				sr.nextKind(t, InputDelivered)
				if c.artifact != "" {
					sr.write(t, task.ArtifactPath(task.PhaseImplement), c.artifact)
				}
				sr.write(t, task.SentinelPath, "")
				rep, _ := sr.nextKind(t, Refused)
				require.Equal(t, c.reason, rep.Refusal.Reason, rep.Refusal.Error())
				require.False(t, sr.exists(task.SentinelPath), "the sentinel is removed")
				typed := sr.waitTyped(t, 2)
				require.Equal(t, "send: "+RefusalText(rep.Refusal, task.PhaseImplement), typed[1])
				require.True(t, strings.HasPrefix(typed[1], "send: "+task.RefusalPrefix), typed[1])

				sr.write(t, task.ArtifactPath(task.PhaseImplement), task.Example(task.PhaseImplement))
				sr.write(t, task.SentinelPath, "")
				fixed, skipped := sr.nextKind(t, PhaseFinished)
				require.Equal(t, task.Example(task.PhaseImplement), string(fixed.Artifact))
				for _, s := range skipped {
					require.NotEqual(t, Refused, s.Kind, "the fixed artifact is not refused")
				}
			})
		})
	}
}

// An artifact written before the session started is an earlier session's:
// refused as stale, however valid.
func TestAnArtifactOlderThanTheLaunchIsStale(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sr := startStub(t, nil)
		rel := task.ArtifactPath(task.PhaseImplement)
		path := filepath.Join(sr.dir, filepath.FromSlash(rel))
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(task.Example(task.PhaseImplement)), 0o644))
		old := sr.launchedAt.Add(-time.Hour)
		require.NoError(t, os.Chtimes(path, old, old))
		sr.write(t, task.SentinelPath, "")
		rep, _ := sr.nextKind(t, Refused)
		require.Equal(t, task.ReasonArtifactStale, rep.Refusal.Reason)
		require.Contains(t, rep.Refusal.Detail, "before this session started")
	})
}

// A sentinel that leads out of the worktree is refused as outside, and
// what it points at is left alone.
func TestASentinelOutsideTheWorktreeIsRefused(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sr := startStub(t, nil)
		outside := filepath.Join(t.TempDir(), "done")
		require.NoError(t, os.WriteFile(outside, nil, 0o644))
		require.NoError(t, os.Symlink(outside, filepath.Join(sr.dir, filepath.FromSlash(task.SentinelPath))))
		sr.changes <- struct{}{}
		rep, _ := sr.nextKind(t, Refused)
		require.Equal(t, task.ReasonPathOutside, rep.Refusal.Reason)
		_, err := os.Stat(outside)
		require.NoError(t, err, "nothing outside the worktree was touched")
	})
}

// What an exited agent left decides what its exit means: a sentinel and a
// valid artifact finish the phase (reported before the exit), whatever
// the exit status; otherwise the exit says what is missing.
func TestTheExitIsReadFromWhatTheAgentLeft(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		artifact, sentinel bool
		want               string // the exit's refusal; "" finishes the phase
	}{
		"nothing":       {false, false, "without writing .orchestra/done, and left no .orchestra/implement.json"},
		"no sentinel":   {true, false, "without writing .orchestra/done, although .orchestra/implement.json is valid"},
		"only sentinel": {false, true, "its artifact was refused"},
		"both":          {true, true, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				sr := startStub(t, nil)
				// Past the watch's first look, and written without telling
				// it: only the exit's reading sees them.
				time.Sleep(time.Second)
				synctest.Wait()
				dir := filepath.Join(sr.dir, task.StateDir)
				require.NoError(t, os.MkdirAll(dir, 0o755))
				if c.artifact {
					require.NoError(t, os.WriteFile(filepath.Join(sr.dir, filepath.FromSlash(task.ArtifactPath(task.PhaseImplement))), []byte(task.Example(task.PhaseImplement)), 0o644))
				}
				if c.sentinel {
					require.NoError(t, os.WriteFile(filepath.Join(sr.dir, filepath.FromSlash(task.SentinelPath)), nil, 0o644))
				}
				sr.sess.end(3)
				if c.want == "" {
					fin, _ := sr.nextKind(t, PhaseFinished)
					require.True(t, fin.AfterExit)
					require.Equal(t, 3, fin.ExitCode)
				}
				exit, skipped := sr.nextKind(t, Exited)
				require.Equal(t, 3, exit.ExitCode)
				for _, s := range skipped {
					require.NotEqual(t, PhaseFinished, s.Kind)
				}
				if c.want == "" {
					require.Nil(t, exit.Refusal)
					return
				}
				require.NotNil(t, exit.Refusal)
				require.Contains(t, exit.Refusal.Detail, "exited with code 3")
				require.Contains(t, exit.Refusal.Detail, c.want)
			})
		})
	}
}

// A still screen is flagged stuck exactly StuckAfter after the brief (the
// wait for the brief is the console's, not the agent's), and unflagged
// when the agent draws again.
func TestAStillScreenIsStuckAfterStuckAfter(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sr := startStub(t, func(p *Params) { p.StuckAfter = 3 * time.Minute })
		time.Sleep(10 * time.Minute) // no brief yet: never stuck
		synctest.Wait()
		require.Empty(t, sr.reports)
		sr.Send(Input{Kind: InputBrief, Text: "the brief"})
		delivered, _ := sr.nextKind(t, InputDelivered)
		stuck, _ := sr.nextKind(t, Stuck)
		require.Equal(t, 3*time.Minute, stuck.At.Sub(delivered.At))
		require.Equal(t, 3*time.Minute, stuck.Idle)
		sr.sess.draw("thinking again")
		unstuck, _ := sr.nextKind(t, Unstuck)
		require.LessOrEqual(t, unstuck.At.Sub(stuck.At), time.Second, "seen on the next sample")
	})
}

// A limit that shows while the brief is typed is reported, though the
// screen never changes after: the CLI took the brief, called its
// provider and was refused, and its empty prompt ("Resend your message")
// made the submit check give up. Before, the limit was counted only on a
// screen change after the brief, so the session sat out its stuck time
// and lost its attempt (Claude Code 2.1, CI of 2026-12-02).
func TestALimitShownWhileTheBriefIsTypedIsReported(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sr := startStub(t, func(p *Params) {
			p.StuckAfter = 3 * time.Minute
			p.Spec.Limits = []session.LimitSign{{Kind: session.LimitRate, Match: `API Error: Request rejected \(429\)`}}
		})
		sr.sess.accept = func(text string) error {
			sr.sess.draw("● API Error: Request rejected (429) · This request would exceed your account's rate limit.\n❯ Resend your message to try again")
			time.Sleep(8 * time.Second) // the submit key's re-sends, sampled meanwhile
			return task.Refuse(task.ReasonInputNotAccepted, "The screen still shows the input waiting.")
		}
		sr.Send(Input{Kind: InputBrief, Text: "the brief"})
		limited, before := sr.nextKind(t, Limited)
		require.Equal(t, session.LimitRate, limited.Limit.Kind)
		for _, rep := range before {
			require.NotEqual(t, Stuck, rep.Kind, "the limit is seen on the sample after the brief, not after the stuck time")
		}
	})
}

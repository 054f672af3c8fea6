package worker

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/orchestra-tui/orchestra-tui/jail"
	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// watch waits for the sentinel. Every event in the state directory restarts
// a settle timer; when the directory has been quiet for Settle and the
// sentinel exists, the artifact is validated. A stat right after the watch
// was added (in Start) would race with the agent, so the first check runs
// when the timer first fires, whatever the events.
func (r *Run) watch(ctx context.Context, changes <-chan struct{}) {
	defer close(r.watchDone)
	settle := time.NewTimer(r.p.Settle)
	defer settle.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-changes:
			r.stateSeen.Store(false)
			settle.Reset(r.p.Settle)
		case <-settle.C:
			if r.finished.Load() {
				continue
			}
			if _, err := r.wt.Stat(task.SentinelPath); jail.IsEscape(err) {
				r.refuse(outsideOr(err, err))
				continue
			} else if err != nil {
				continue
			}
			data, err := task.ReadArtifactIn(r.wt, r.p.Phase)
			if err != nil {
				r.refuse(err)
				continue
			}
			if !r.waitIdle(ctx) {
				return
			}
			if err := r.checkOwnWork(); err != nil {
				r.refuse(err)
				continue
			}
			if r.finished.CompareAndSwap(false, true) {
				r.report(Report{Kind: PhaseFinished, Artifact: data})
			}
			return
		}
	}
}

func (r *Run) sentinelExists() bool {
	_, err := r.wt.Stat(task.SentinelPath)
	return err == nil
}

// refuse removes the sentinel, so a fixed artifact must be announced again,
// types the refusal into the pane and reports it. The removal goes through
// the jail: a sentinel reached through a symlink out of the worktree is
// left alone.
func (r *Run) refuse(err error) {
	var ref *task.Refusal
	if !errors.As(err, &ref) {
		ref = &task.Refusal{Reason: task.ReasonArtifactNotFile, Detail: err.Error()}
	}
	_ = r.wt.Remove(task.SentinelPath)
	r.Send(Input{Kind: InputRefusal, Text: RefusalText(ref, r.p.Phase)})
	r.report(Report{Kind: Refused, Refusal: ref})
}

// waitIdle returns once the screen has not changed for the harness's quiet
// period, so a phase is never finished under an agent still talking. It
// compares the screen's version once per quiet period rather than reading
// the session's change channel, whose one reader is the coordinator.
func (r *Run) waitIdle(ctx context.Context) bool {
	quiet := r.p.Spec.Quiet.Duration
	if quiet <= 0 {
		quiet = 200 * time.Millisecond
	}
	view := r.sess.View()
	seen := view.Version()
	t := time.NewTimer(quiet)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			v := view.Version()
			if v == seen {
				return true
			}
			seen = v
			t.Reset(quiet)
		}
	}
}

// worktreeBackoff bounds how far the worktree's fingerprint backs off while
// an agent sits still: twelve times WorktreeEvery (a minute by default),
// well inside a lease's renewal window.
const worktreeBackoff = 12

// sampleLoop takes a progress sample every SampleEvery and tracks how long
// the screen has been still, for stuck detection. Stillness counts only
// from the brief's delivery: before it the agent is waiting on us. A
// still screen over a process tree that works (its CPU time, read every
// cpuEvery, is lease.CPUWorks over the StuckWindow before the sample, and
// since the screen went still and the brief) is not stillness either: a
// silent build is work, and the stuck clock runs from when the tree last
// worked. The sample says how much it worked in the last lease.CPUWindow,
// for the list.
//
// The worktree's fingerprint runs git, the one costly part of a sample: it
// is taken every WorktreeEvery while the agent shows signs of work, and
// while neither its screen (volatile parts masked) nor its worktree has
// changed since the last one, four times as far apart each time, up to
// worktreeBackoff times WorktreeEvery (by default 5 s, 20 s, then every
// minute). Sixteen idle agents then cost git once a minute each instead of
// every five seconds, and the first change of screen brings the pace back.
func (r *Run) sampleLoop(ctx context.Context) {
	tick := time.NewTicker(r.p.SampleEvery)
	defer tick.Stop()
	lastScreen := r.Sample().Screen
	lastChange := r.p.Now()
	lastWorktree := lastChange
	worktreeWait := r.p.WorktreeEvery
	screenAtWorktree := lastScreen
	stuck := false
	dialog := "" // the dialog reported as needing the operator
	// The tree's CPU time: a still screen over a tree that works is not
	// stuck (lease.CPUWorks); busyAt is when it last counted as working.
	cpu, _ := r.sess.(cpuReader)
	var meter CPUMeter
	var cpuAt, busyAt time.Time
	limits := 0 // the limit messages the screen showed at the last sample
	// limitScreen is the screen the limits were last counted on; none
	// before the brief is in. A limit that showed while the brief was
	// being typed (a CLI that took the brief, called its provider and
	// was refused before the submit check gave up) is counted on the
	// first sample after, though that screen never changes again.
	limitScreen, limitCounted := "", false
	for {
		var ack chan struct{}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		case ack = <-r.resample:
		}
		if r.briefedAt.Load() == 0 && !r.finished.Load() {
			dialog = r.noteDialog(dialog)
		}
		prev := r.Sample()
		now := r.p.Now()
		refresh := now.Sub(lastWorktree) >= worktreeWait
		if refresh {
			lastWorktree = now
		}
		s := r.takeSample(prev, refresh)
		if cpu != nil && now.Sub(cpuAt) >= cpuEvery {
			cpuAt = now
			if d, ok := cpu.CPU(); ok {
				meter.Add(now, d)
			}
		}
		quietFrom := lastChange // the CPU of a still screen counts from its stillness and the brief
		if b := time.Unix(0, r.briefedAt.Load()); b.After(quietFrom) {
			quietFrom = b
		}
		s.CPU = meter.Total()
		s.Working = meter.Working(later(quietFrom, now.Add(-lease.CPUWindow)))
		busy := meter.Working(later(quietFrom, now.Add(-StuckWindow(r.p.StuckAfter)))) > 0
		if s.Screen != lastScreen {
			s.Still, s.Working, busy = 0, 0, false
		} else {
			s.Still = now.Sub(lastChange)
		}
		r.sample.Store(&s)
		if ack != nil {
			close(ack)
		}
		worktreeWait = nextWorktreeWait(worktreeWait, r.p.WorktreeEvery,
			s.Screen != screenAtWorktree, refresh, s.Worktree != prev.Worktree)
		if refresh || s.Screen != screenAtWorktree {
			screenAtWorktree = s.Screen
		}
		if s.Advanced(prev) {
			r.progressAt.Store(now.UnixNano())
		}
		if r.briefedAt.Load() != 0 && (!limitCounted || s.Screen != limitScreen) && !r.finished.Load() {
			limits = r.noteLimit(limits, now)
			limitScreen, limitCounted = s.Screen, true
		}
		if busy {
			busyAt = now
		}
		if s.Screen != lastScreen || busy {
			if s.Screen != lastScreen {
				lastScreen, lastChange = s.Screen, now
			}
			if stuck {
				stuck = false
				r.report(Report{Kind: Unstuck})
			}
			continue
		}
		briefed := r.briefedAt.Load()
		if briefed == 0 {
			continue
		}
		since := lastChange
		if b := time.Unix(0, briefed); b.After(since) {
			since = b
		}
		if busyAt.After(since) {
			since = busyAt
		}
		idle := now.Sub(since)
		if !stuck && r.p.StuckAfter > 0 && idle >= r.p.StuckAfter && !r.finished.Load() && !r.sentinelExists() {
			stuck = true
			r.report(Report{Kind: Stuck, Idle: idle})
		}
	}
}

// freshSample has the sampler take a sample now and returns once it is
// stored (at once when the run has ended): what the coordinator reads
// after a report sent next is then no older than the report.
func (r *Run) freshSample(ctx context.Context) {
	ack := make(chan struct{})
	select {
	case r.resample <- ack:
	case <-ctx.Done():
		return
	}
	select {
	case <-ack:
	case <-ctx.Done():
	}
}

// nextWorktreeWait is how long the next worktree fingerprint waits after a
// sample: every again once the screen has changed since the last
// fingerprint or the fingerprint just taken (refreshed) differs from the
// one before; four times wait, up to worktreeBackoff times every, when one was
// just taken and nothing had changed; wait as it was otherwise.
func nextWorktreeWait(wait, every time.Duration, screenChanged, refreshed, worktreeChanged bool) time.Duration {
	switch {
	case screenChanged, refreshed && worktreeChanged:
		return every
	case refreshed:
		return min(4*wait, worktreeBackoff*every)
	default:
		return wait
	}
}

// takeSample fingerprints the screen (volatile parts masked) when it has
// changed since prev, the worktree's changed files when refresh is set
// (that runs git, so not on every sample), and counts the artifacts
// present when the state directory changed since they were last counted
// (or its watch has ended).
func (r *Run) takeSample(prev lease.Progress, refresh bool) lease.Progress {
	p := prev
	p.At = r.p.Now()
	view := r.sess.View()
	if v := view.Version(); v != r.screenVersion || prev.Screen == "" {
		r.screenVersion = v
		cols, rows := view.Size()
		p.Screen = r.resize.screen(lease.ScreenFingerprint(view.Text(), r.volatile), prev.Screen, [2]int{cols, rows}, p.At)
	}
	if refresh && r.p.Changed != nil {
		if files, err := r.p.Changed(r.p.Dir, r.p.Base); err == nil {
			entries := make([]string, 0, len(files))
			for _, f := range files {
				if fi, err := r.wt.Stat(f); err == nil {
					entries = append(entries, lease.WorktreeEntry(f, fi.Size(), fi.ModTime()))
				} else {
					entries = append(entries, lease.WorktreeEntry(f, -1, time.Time{}))
				}
			}
			p.Worktree = lease.WorktreeFingerprint(entries)
		}
	}
	watching := true
	select {
	case <-r.watchDone:
		watching = false
	default:
	}
	if watching && r.stateSeen.Swap(true) && prev.At != (time.Time{}) {
		return p
	}
	p.Artifacts = 0
	ents, _ := r.wt.ReadDir(task.StateDir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") {
			p.Artifacts++
		}
	}
	return p
}

// mtimeSlack absorbs the coarse clock file times are stamped with.
const mtimeSlack = time.Second

// checkOwnWork refuses an artifact that may not be this session's: one
// older than the session's launch, or any while a process of an older
// session of the task is still alive (that process is stopped, so the
// agent's next write is its own).
func (r *Run) checkOwnWork() error {
	rel := task.ArtifactPath(r.p.Phase)
	if fi, err := r.wt.Lstat(rel); err == nil && fi.ModTime().Before(r.launchedAt.Add(-mtimeSlack)) {
		return task.Refuse(task.ReasonArtifactStale, "%s was last written at %s, before this session started at %s.",
			rel, fi.ModTime().UTC().Format(time.RFC3339Nano), r.launchedAt.UTC().Format(time.RFC3339Nano))
	}
	var older []int
	for _, p := range session.Marked(r.p.Owner, string(r.p.TaskID)) {
		if p.Session != r.p.SessionID {
			older = append(older, p.Pid)
		}
	}
	if len(older) > 0 {
		_ = session.StopMarked(r.p.Owner, string(r.p.TaskID), r.p.SessionID, fenceGrace)
		return task.Refuse(task.ReasonArtifactStale, "process(es) %v of an older session were alive in the worktree and were stopped; write %s again.", older, rel)
	}
	return nil
}

// noteDialog reports a dialog of the CLI's that the screen shows before
// the brief is delivered (NeedsYou, once per dialog text), and its end
// (Answered). It returns the dialog now reported, "" for none.
func (r *Run) noteDialog(was string) string {
	d, said, ok := r.p.Spec.DialogOn(r.sess.View().Text())
	now := ""
	if ok {
		now = d.Name + ": " + said
	}
	switch {
	case now != "" && now != was:
		r.report(Report{Kind: NeedsYou, Text: now})
	case now == "" && was != "":
		r.report(Report{Kind: Answered})
	}
	return now
}

// resizeSettle is how long after a resize the screens an agent draws
// count as the resize's: a full-screen program redraws itself for its new
// size over a few frames.
const resizeSettle = 2 * time.Second

// resizeSeen makes a change of the screen that is only a resize no
// progress: the screens drawn within resizeSettle of a change of the pty's
// size stand for the screen before it, so the stuck clock and the lease's
// progress see no change until the agent draws something after. A
// console resizing a stuck pane (another console typing, a terminal
// dragged wider) never resets its stuck clock.
type resizeSeen struct {
	size    [2]int
	at      time.Time
	from    string            // the fingerprint before the resize
	aliases map[string]string // screens of the resize -> from
}

// screen is the fingerprint to report for a screen fingerprinted fp at
// size at time now, prev being the one reported before.
func (rs *resizeSeen) screen(fp, prev string, size [2]int, now time.Time) string {
	if size != rs.size {
		first := rs.size == [2]int{}
		rs.size = size
		if !first && prev != "" {
			rs.at, rs.from, rs.aliases = now, prev, map[string]string{}
		}
	}
	if rs.aliases == nil {
		return fp
	}
	if from, ok := rs.aliases[fp]; ok {
		return from
	}
	if now.Sub(rs.at) <= resizeSettle {
		rs.aliases[fp] = rs.from
		return rs.from
	}
	return fp
}

// noteLimit reports a limit of the provider's that the screen shows once
// the brief is in (Limited), when the number of limit messages on it grew
// since the last sample (seen): the CLI's old message stays in its history
// after the agent went on, and must not be taken for a new one. When the
// last one is gone (a CLI that shows its retry in a status line clears it
// once the retry went through) it reports LimitGone. It returns the number
// now shown.
func (r *Run) noteLimit(seen int, now time.Time) int {
	l, n, ok := r.p.Spec.LimitOn(r.sess.View().Text(), now)
	switch {
	case ok && n > seen:
		r.report(Report{Kind: Limited, Limit: &l, Text: string(l.Kind) + ": " + l.Text})
	case n == 0 && seen > 0:
		r.report(Report{Kind: LimitGone})
	}
	return n
}

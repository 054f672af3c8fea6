package lease

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// t0 is the fixed launch instant every policy test counts from.
var t0 = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

func sample(screen string, d time.Duration) Progress {
	return Progress{
		Screen:   ScreenFingerprint(screen, nil),
		Worktree: WorktreeFingerprint(nil),
		At:       at(d),
	}
}

// launched is a lease granted at t0 with the default policy and a launch
// baseline showing the agent's ready prompt.
func launched() Lease {
	return Grant("T1", "slot-1", 7, t0, DefaultPolicy(), sample("agent ❯ ", 0))
}

func TestDecide(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	// The window of a lease granted at t0 opens at 15m, its deadline is 20m.
	capped := launched()
	capped.Renewals = p.MaxRenewals

	tests := []struct {
		name   string
		lease  Lease
		sample Progress
		// started and now, as offsets from t0.
		started, now time.Duration
		want         Action
		reason       task.Reason
		deadline     time.Time // expected deadline of the stored lease
		renewals     int
		textHas      string
	}{
		{
			name:    "progress in the window renews from the renewal's start",
			lease:   launched(),
			sample:  sample("agent ❯ fix\n● Read calc.go", 16*time.Minute),
			started: 16 * time.Minute, now: 16 * time.Minute,
			want: ActionRenew, deadline: at(36 * time.Minute), renewals: 1,
			textHas: "the screen changed",
		},
		{
			name:    "no progress in the window is refused and the lease stands",
			lease:   advancedLease(),
			sample:  advancedLease().Baseline,
			started: 35 * time.Minute, now: 35 * time.Minute,
			want: ActionRefuse, reason: task.ReasonRenewalNoProgress,
			deadline: at(36 * time.Minute), renewals: 1, textHas: "no change",
		},
		{
			name:    "a spinner-only change is not progress",
			lease:   spinnerLease(),
			sample:  spinnerSample("⠹", "(47s", 17*time.Minute),
			started: 17 * time.Minute, now: 17 * time.Minute,
			want: ActionRefuse, reason: task.ReasonRenewalNoProgress,
			deadline: at(20 * time.Minute),
		},
		{
			name:    "the first renewal is not exempt: a launch that did nothing is refused",
			lease:   launched(),
			sample:  sample("agent ❯ ", 15*time.Minute),
			started: 15 * time.Minute, now: 15 * time.Minute,
			want: ActionRefuse, reason: task.ReasonRenewalNoProgress,
			deadline: at(20 * time.Minute), textHas: "since 10:00:00",
		},
		{
			name:    "the renewal cap refuses even with progress",
			lease:   capped,
			sample:  sample("agent ❯ something new", 16*time.Minute),
			started: 16 * time.Minute, now: 16 * time.Minute,
			want: ActionRefuse, reason: task.ReasonRenewalCap,
			deadline: at(20 * time.Minute), renewals: p.MaxRenewals, textHas: "12 of 12",
		},
		{
			name:    "a slow renewal does not extend trust past started+Length",
			lease:   launched(),
			sample:  sample("agent ❯ fix\n● Read calc.go", 15*time.Minute),
			started: 15 * time.Minute, now: 19*time.Minute + 59*time.Second,
			want: ActionRenew, deadline: at(35 * time.Minute), renewals: 1,
		},
		{
			name:    "past the deadline expires, progress or not",
			lease:   launched(),
			sample:  sample("agent ❯ lots of new work", 20*time.Minute),
			started: 20 * time.Minute, now: 20*time.Minute + 3*time.Second,
			want: ActionExpire, reason: task.ReasonLeaseExpired,
			deadline: at(20 * time.Minute), textHas: "3s ago",
		},
		{
			name:    "at the deadline exactly the lease is expired",
			lease:   launched(),
			sample:  sample("agent ❯ ", 20*time.Minute),
			started: 20 * time.Minute, now: 20 * time.Minute,
			want: ActionExpire, reason: task.ReasonLeaseExpired,
			deadline: at(20 * time.Minute),
		},
		{
			name:    "before the window opens there is nothing to do",
			lease:   launched(),
			sample:  sample("agent ❯ new work", 10*time.Minute),
			started: 10 * time.Minute, now: 10 * time.Minute,
			want: ActionWait, deadline: at(20 * time.Minute),
			textHas: "opens at 10:15:00 (in 5m0s)",
		},
		{
			name:    "a worktree change alone is progress",
			lease:   launched(),
			sample:  Progress{Screen: launched().Baseline.Screen, Worktree: WorktreeFingerprint([]string{"calc.go 10 1"}), At: at(16 * time.Minute)},
			started: 16 * time.Minute, now: 16 * time.Minute,
			want: ActionRenew, deadline: at(36 * time.Minute), renewals: 1, textHas: "the worktree changed",
		},
		{
			name:    "a new artifact alone is progress",
			lease:   launched(),
			sample:  Progress{Screen: launched().Baseline.Screen, Worktree: launched().Baseline.Worktree, Artifacts: 1, At: at(16 * time.Minute)},
			started: 16 * time.Minute, now: 16 * time.Minute,
			want: ActionRenew, deadline: at(36 * time.Minute), renewals: 1, textHas: "artifacts (0 → 1)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Decide(tc.lease, p, tc.sample, at(tc.started), at(tc.now))
			require.Equal(t, tc.want, d.Action, d.Text)
			require.Equal(t, tc.reason, d.Reason)
			require.Equal(t, tc.deadline, d.Lease.Deadline)
			require.Equal(t, tc.renewals, d.Lease.Renewals)
			require.Equal(t, string(tc.want), d.Lease.LastDecision)
			require.Equal(t, tc.reason, d.Lease.LastReason)
			require.NotEmpty(t, d.Text)
			if tc.textHas != "" {
				require.Contains(t, d.Text, tc.textHas)
			}
			// Trust never runs past the start of the renewal plus a lease.
			if d.Action == ActionRenew {
				require.False(t, d.Lease.Deadline.After(at(tc.started).Add(p.Length)))
				require.Equal(t, tc.sample, d.Lease.Baseline)
			} else {
				require.Equal(t, tc.lease.Baseline, d.Lease.Baseline)
			}
			if tc.reason != "" {
				require.True(t, tc.reason.Known())
			}
		})
	}
}

// advancedLease is a lease renewed once at 16m, whose baseline is the sample
// that renewal saw.
func advancedLease() Lease {
	d := Decide(launched(), DefaultPolicy(), sample("agent ❯ fix\n● Read calc.go", 16*time.Minute), at(16*time.Minute), at(16*time.Minute))
	return d.Lease
}

func spinnerScreen(glyph, elapsed string) string {
	return "agent ❯ fix the bug\n● Read calc.go\n" + glyph + " Thinking… " + elapsed + " · esc to interrupt)   \n\n"
}

func spinnerSample(glyph, elapsed string, d time.Duration) Progress {
	return Progress{Screen: ScreenFingerprint(spinnerScreen(glyph, elapsed), nil), Worktree: WorktreeFingerprint(nil), At: at(d)}
}

func spinnerLease() Lease {
	return Grant("T1", "slot-1", 7, t0, DefaultPolicy(), spinnerSample("⠋", "(3s", 0))
}

func TestLastProgressAtFollowsSamplesThatDiffer(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	l := launched()
	require.True(t, l.LastProgressAt.IsZero())

	// Progress before the window is remembered even though nothing is renewed.
	d := Decide(l, p, sample("agent ❯ working", 5*time.Minute), at(5*time.Minute), at(5*time.Minute))
	require.Equal(t, ActionWait, d.Action)
	require.Equal(t, at(5*time.Minute), d.Lease.LastProgressAt)

	// A sample equal to the baseline leaves it alone.
	d = Decide(d.Lease, p, sample("agent ❯ ", 6*time.Minute), at(6*time.Minute), at(6*time.Minute))
	require.Equal(t, at(5*time.Minute), d.Lease.LastProgressAt)

	// A sample without a time is stamped with now.
	s := sample("agent ❯ more", 0)
	s.At = time.Time{}
	d = Decide(d.Lease, p, s, at(7*time.Minute), at(7*time.Minute))
	require.Equal(t, at(7*time.Minute), d.Lease.LastProgressAt)

	// The expiry sentence names it. (The same sample, stamped 7m, again.)
	s.At = at(7 * time.Minute)
	d = Decide(d.Lease, p, s, at(21*time.Minute), at(21*time.Minute))
	require.Equal(t, ActionExpire, d.Action)
	require.Contains(t, d.Text, "last progress at 10:07:00")
}

func TestRenewalStartedAfterNowIsClampedToNow(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	d := Decide(launched(), p, sample("agent ❯ new", 16*time.Minute), at(30*time.Minute), at(16*time.Minute))
	require.Equal(t, ActionRenew, d.Action)
	require.Equal(t, at(36*time.Minute), d.Lease.Deadline)
}

func TestLeaseClockHelpers(t *testing.T) {
	t.Parallel()
	p := DefaultPolicy()
	l := launched()
	require.Equal(t, at(15*time.Minute), l.WindowOpensAt(p))
	require.Equal(t, 5*time.Minute, l.Remaining(at(15*time.Minute)))
	require.Equal(t, time.Duration(0), l.Remaining(at(25*time.Minute)))

	ext := l.Extend(10 * time.Minute)
	require.Equal(t, at(30*time.Minute), ext.Deadline)
	require.Equal(t, l.Renewals, ext.Renewals)
	require.Equal(t, l.Baseline, ext.Baseline)
	require.Equal(t, at(20*time.Minute), l.Deadline, "Extend returns a new value")

	require.Equal(t, int64(7), l.Token)
	require.Equal(t, task.ID("T1"), l.TaskID)
	require.Equal(t, t0, l.GrantedAt)
}

func TestPolicyValidate(t *testing.T) {
	t.Parallel()
	require.NoError(t, DefaultPolicy().Validate())
	err := Policy{Length: time.Minute, Window: time.Minute, MaxRenewals: -1}.Validate()
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "shorter than the lease"), err.Error())
	require.Contains(t, err.Error(), "must not be negative")
	require.Error(t, Policy{}.Validate())
}

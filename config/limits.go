package config

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Limits bounds what operators and agents can make the console hold: a
// correction is typed into a pane and rendered into every later brief, and
// a recording grows as fast as its pane prints.
type Limits struct {
	// CorrectionBytes is the largest correction accepted, in bytes.
	CorrectionBytes int `toml:"correction_bytes"`
	// RecordingBytes caps one session's asciicast recording; past it the
	// recording notes where it was cut and stops growing. 0 means no cap.
	RecordingBytes int64 `toml:"recording_bytes"`
	// OnLimit says what a task does when its agent's provider shows a
	// usage or rate limit: "wait" (the default) holds the session until
	// the reset and goes on there; "handoff:HARNESS" moves the task to
	// that harness, with its continuity, at once.
	OnLimit string `toml:"on_limit"`
	// LimitWait is how long a limit whose message gives no reset time
	// waits; "" means 5 minutes.
	LimitWait Duration `toml:"limit_wait"`
}

// Limit policies.
const (
	OnLimitWait    = "wait"
	OnLimitHandoff = "handoff:"
)

// HandoffOnLimit returns the harness a limited task moves to, "" when it
// waits.
func (l Limits) HandoffOnLimit() string {
	h, ok := strings.CutPrefix(l.OnLimit, OnLimitHandoff)
	if !ok {
		return ""
	}
	return strings.TrimSpace(h)
}

// LimitWaitOr is the wait of a limit with no reset time given.
func (l Limits) LimitWaitOr() time.Duration {
	if l.LimitWait.Duration > 0 {
		return l.LimitWait.Duration
	}
	return 5 * time.Minute
}

// limitErrors reports an on_limit that is neither policy, or that hands
// off to a harness not defined.
func (c Config) limitErrors(name string) []error {
	switch on := c.Limits.OnLimit; {
	case on == "" || on == OnLimitWait:
	case strings.HasPrefix(on, OnLimitHandoff):
		h := c.Limits.HandoffOnLimit()
		if _, ok := c.Harness[h]; !ok {
			return []error{fmt.Errorf("%s: limits.on_limit = %q: no harness %q is defined", name, on, h)}
		}
	default:
		return []error{fmt.Errorf("%s: limits.on_limit = %q: use %q or %q followed by a harness name", name, on, OnLimitWait, OnLimitHandoff)}
	}
	return nil
}

// DefaultLimits returns the limits a repository without config gets.
func DefaultLimits() Limits {
	return Limits{CorrectionBytes: 16 << 10, RecordingBytes: 64 << 20, OnLimit: OnLimitWait, LimitWait: Duration{Duration: 5 * time.Minute}}
}

// MaxPaneCols and MaxPaneRows bound a pane's size wherever it comes from:
// [pane] in orchestra.toml, or a console's resize (which the engine takes
// from any client on its socket).
const (
	MaxPaneCols = maxPaneCols
	MaxPaneRows = maxPaneRows
)

// The ranges every number in orchestra.toml must fall in. They are wide:
// they exist to refuse a typo or a hostile file (a 100000-column pane runs
// the console out of memory at its first launch), not to second-guess a
// setting.
const (
	maxPaneCols      = 1000
	maxPaneRows      = 500
	maxPaneHistory   = 1000000
	maxDuration      = 7 * 24 * time.Hour
	maxCount         = 1000
	maxBriefBudget   = 1 << 20
	minBriefBudget   = 256
	maxCorrection    = 1 << 20
	maxRecording     = 1 << 40
	maxPricePerMTok  = 10000.0
	minLeaseTick     = 10 * time.Millisecond
	maxSlotsCapacity = 256
)

// rangeErrors returns one error for every number outside its range, each
// naming the key, its value and the range.
func (c Config) rangeErrors(name string) []error {
	var errs []error
	intIn := func(key string, v, lo, hi int) {
		if v < lo || v > hi {
			errs = append(errs, fmt.Errorf("%s: %s = %d is out of range (%d to %d)", name, key, v, lo, hi))
		}
	}
	durIn := func(key string, v, lo, hi time.Duration) {
		if v < lo || v > hi {
			errs = append(errs, fmt.Errorf("%s: %s = %s is out of range (%s to %s)", name, key, v, lo, hi))
		}
	}
	intIn("pane.cols", c.Pane.Cols, 20, maxPaneCols)
	intIn("pane.rows", c.Pane.Rows, 5, maxPaneRows)
	intIn("pane.history", c.Pane.History, 0, maxPaneHistory)
	durIn("lease.length", c.Lease.Length.Duration, time.Millisecond, maxDuration)
	durIn("lease.tick", c.Lease.Tick.Duration, minLeaseTick, time.Hour)
	intIn("lease.max_renewals", c.Lease.MaxRenewals, 0, maxCount)
	intIn("lease.max_attempts", c.Lease.MaxAttempts, 1, maxCount)
	durIn("stuck.after", c.Stuck.After.Duration, 0, maxDuration)
	intIn("stuck.auto_resubmit", c.Stuck.AutoResubmit, 0, maxCount)
	durIn("verify.timeout", c.Verify.Timeout.Duration, time.Millisecond, maxDuration)
	if c.Brief.Budget != 0 {
		intIn("brief.budget", c.Brief.Budget, minBriefBudget, maxBriefBudget)
	}
	durIn("fork.cache_lifetime", c.Fork.CacheLifetime.Duration, time.Millisecond, maxDuration)
	durIn("fork.expected_gap", c.Fork.ExpectedGap.Duration, 0, maxDuration)
	durIn("limits.limit_wait", c.Limits.LimitWait.Duration, 0, maxDuration)
	errs = append(errs, c.limitErrors(name)...)
	intIn("limits.correction_bytes", c.Limits.CorrectionBytes, 1, maxCorrection)
	if c.Limits.RecordingBytes < 0 || c.Limits.RecordingBytes > maxRecording {
		errs = append(errs, fmt.Errorf("%s: limits.recording_bytes = %d is out of range (0 to %d)", name, c.Limits.RecordingBytes, int64(maxRecording)))
	}
	for i, s := range c.Slots {
		intIn(fmt.Sprintf("slots[%d].capacity", i), s.Capacity, 0, maxSlotsCapacity)
	}
	for _, n := range sortedKeys(c.Harness) {
		h := c.Harness[n]
		intIn("harness."+n+".capacity", h.Capacity, 0, maxSlotsCapacity)
		durIn("harness."+n+".quiet", h.Quiet.Duration, 0, time.Hour)
		durIn("harness."+n+".launch_timeout", h.LaunchTimeout.Duration, 0, time.Hour)
		durIn("harness."+n+".own_grace", h.OwnGrace.Duration, 0, time.Hour)
	}
	for _, m := range sortedKeys(c.Prices) {
		p := c.Prices[m]
		for _, kv := range []struct {
			key string
			v   float64
		}{{"input", p.Input}, {"output", p.Output}, {"cache_creation", p.CacheCreation}, {"cache_read", p.CacheRead}} {
			key, v := kv.key, kv.v
			if !(v >= 0 && v <= maxPricePerMTok) { // also refuses NaN
				errs = append(errs, fmt.Errorf("%s: prices.%s.%s = %g is out of range (0 to %g)", name, m, key, v, maxPricePerMTok))
			}
		}
	}
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

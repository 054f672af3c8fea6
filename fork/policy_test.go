package fork

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// TestDecide pins the keep-warm / let-expire / retrain policy as a table of
// (base, policy, now) to (action, due). The base's training read 43,000
// tokens of prefix: a ping costs $0.0132 at the cache-read price, a retrain
// $0.1830, so keeping warm pays for up to 13 pings.
func TestDecide(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	price := config.Price{Input: 3, Output: 15, CacheCreation: 3.75, CacheRead: 0.3}
	prices := map[string]config.Price{"claude-m": price}
	base := func(model string) Base {
		var tot usage.Totals
		tot.Add(usage.Record{Model: model, Tokens: usage.Tokens{Input: 1000, CacheCreation: 40000, Output: 2000}}, prices)
		return Base{ID: "b", Model: model, Training: tot, CreatedAt: t0, LastHitAt: t0}
	}
	policy := func(lifetime, gap time.Duration) Policy {
		return Policy{CacheLifetime: lifetime, ExpectedGap: gap, PingLead: 30 * time.Second, Prices: prices}
	}
	five, hour := 5*time.Minute, time.Hour
	retired := base("claude-m")
	retired.RetiredAt = t0.Add(time.Minute)

	for _, tc := range []struct {
		name   string
		base   Base
		policy Policy
		now    time.Duration // after the last hit
		action Action
		due    time.Duration // after the last hit
		pings  int
	}{
		{"next fork before expiry: wait", base("claude-m"), policy(five, 4*time.Minute), time.Minute, ActionWait, five, 0},
		{"gap of 15m: three pings beat a retrain", base("claude-m"), policy(five, 15*time.Minute), time.Minute, ActionKeepWarm, 4*time.Minute + 30*time.Second, 3},
		{"ping overdue: due now", base("claude-m"), policy(five, 15*time.Minute), 4*time.Minute + 45*time.Second, ActionKeepWarm, 4*time.Minute + 45*time.Second, 3},
		{"gap of 2h: 26 pings cost more than a retrain", base("claude-m"), policy(five, 2*time.Hour), time.Minute, ActionLetExpire, five, 26},
		{"expired: retrain ahead of the next fork", base("claude-m"), policy(five, 15*time.Minute), 6 * time.Minute, ActionRetrain, 14*time.Minute + 30*time.Second, 0},
		{"expired and the fork is overdue: retrain now", base("claude-m"), policy(five, 15*time.Minute), 20 * time.Minute, ActionRetrain, 20 * time.Minute, 0},
		{"expires exactly now, its expected fork never came", base("claude-m"), policy(five, 4*time.Minute), five, ActionLetExpire, five, 0},
		{"one-hour cache covers a 15m gap", base("claude-m"), policy(hour, 15*time.Minute), 50 * time.Minute, ActionWait, hour, 0},
		{"unpriced model weighs relative units", base("claude-unpriced"), policy(five, 15*time.Minute), time.Minute, ActionKeepWarm, 4*time.Minute + 30*time.Second, 3},
		{"unpriced, long gap", base("claude-unpriced"), policy(five, 3*time.Hour), time.Minute, ActionLetExpire, five, 39},
		{"retired", retired, policy(five, 15*time.Minute), time.Minute, ActionRetired, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := Decide(tc.base, tc.policy, t0.Add(tc.now))
			require.Equal(t, tc.action, d.Action, d.Reason)
			if tc.action != ActionRetired {
				require.Equal(t, t0.Add(tc.due), d.Due, d.Reason)
				require.Equal(t, t0.Add(tc.policy.CacheLifetime), d.ExpiresAt)
			}
			require.Equal(t, tc.pings, d.Pings, d.Reason)
			require.NotEmpty(t, d.Reason)
			// Pure: the same inputs give the same decision.
			require.Equal(t, d, Decide(tc.base, tc.policy, t0.Add(tc.now)))
		})
	}
}

// TestDecideCosts checks the figures the decision weighs and says.
// TestPingsDoNotPostponeTheNextFork checks the expected next fork runs from
// the last real use: a base kept warm by pings is not pinged for ever.
func TestPingsDoNotPostponeTheNextFork(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	prices := map[string]config.Price{"claude-m": {Input: 3, Output: 15, CacheCreation: 3.75, CacheRead: 0.3}}
	var tot usage.Totals
	tot.Add(usage.Record{Model: "claude-m", Tokens: usage.Tokens{Input: 1000, CacheCreation: 40000, Output: 2000}}, prices)
	p := Policy{CacheLifetime: 5 * time.Minute, ExpectedGap: 15 * time.Minute, PingLead: 30 * time.Second, Prices: prices}
	// Used at t0, kept warm by pings until 14m: the fork expected at 15m
	// comes before the cache expires at 19m, so there is nothing to ping.
	b := Base{Model: "claude-m", Training: tot, CreatedAt: t0, LastUsedAt: t0, LastHitAt: t0.Add(14 * time.Minute)}
	d := Decide(b, p, t0.Add(14*time.Minute+30*time.Second))
	require.Equal(t, ActionWait, d.Action, d.Reason)
	// The expected fork never came and the cache ran out: nothing is
	// retrained ahead of a fork nobody has asked for.
	d = Decide(b, p, t0.Add(20*time.Minute))
	require.Equal(t, ActionLetExpire, d.Action, d.Reason)
	require.Contains(t, d.Reason, "never came")
}

func TestDecideCosts(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 3, 14, 15, 0, 0, 0, time.UTC)
	prices := map[string]config.Price{"claude-m": {Input: 3, Output: 15, CacheCreation: 3.75, CacheRead: 0.3}}
	var tot usage.Totals
	tot.Add(usage.Record{Model: "claude-m", Tokens: usage.Tokens{Input: 1000, CacheCreation: 40000, Output: 2000}}, prices)
	b := Base{Model: "claude-m", Training: tot, LastHitAt: t0}
	d := Decide(b, Policy{CacheLifetime: 5 * time.Minute, ExpectedGap: 15 * time.Minute, PingLead: 30 * time.Second, Prices: prices}, t0)
	require.InDelta(t, 0.0132, d.PingCost, 1e-9)
	require.InDelta(t, 0.183, d.RetrainCost, 1e-9)
	require.Equal(t, "$", d.Units)
	require.Equal(t, "Keep warm: 3 ping(s) until the next fork at 15:15:00 cost about $0.0396, less than a retrain at $0.1830; first ping at 15:04:30.", d.Reason)
}

// TestDiffNamesTheFields checks a refusal can say what changed.
func TestDiffNamesTheFields(t *testing.T) {
	t.Parallel()
	a := sessionLaunch("claude-a", []string{"Bash"})
	b := sessionLaunch("claude-b", []string{"Bash", "Write"})
	require.Empty(t, Diff(a, a))
	diff := Diff(a, b)
	require.Contains(t, diff, `model: "claude-a" (base) vs "claude-b"`)
	require.Contains(t, diff, `allowed_tools: "Bash" (base) vs "Bash Write"`)
}

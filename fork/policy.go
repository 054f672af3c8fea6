package fork

import (
	"fmt"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// Policy is what Decide weighs: the cache's lifetime, when the next fork
// is expected, and prices.
type Policy struct {
	// CacheLifetime is how long the cache lives after its last read.
	CacheLifetime time.Duration
	// ExpectedGap is how long after the last use the next fork is expected.
	ExpectedGap time.Duration
	// PingLead is how long before expiry a keep-warm ping is due.
	PingLead time.Duration
	// Prices are per model, per million tokens; a model without a price is
	// weighed in relative units (see relativePrice).
	Prices map[string]config.Price
}

// PolicyFrom reads the policy from the configuration's [fork] table and
// price table.
func PolicyFrom(cfg config.Config) Policy {
	return Policy{
		CacheLifetime: cfg.Fork.CacheLifetime.Duration,
		ExpectedGap:   cfg.Fork.ExpectedGap.Duration,
		PingLead:      cfg.Fork.PingLead.Duration,
		Prices:        cfg.Prices,
	}
}

// Action is what to do about a base's cache.
type Action string

// Actions Decide returns.
const (
	// ActionWait: the cache is warm and the next fork is expected before
	// it expires; nothing to do until Due.
	ActionWait Action = "wait"
	// ActionKeepWarm: send a tiny fork at Due so the cache outlives the
	// gap; the pings cost less than a retrain.
	ActionKeepWarm Action = "keep-warm"
	// ActionLetExpire: the pings the gap needs would cost more than a
	// retrain; let the cache expire at Due.
	ActionLetExpire Action = "let-expire"
	// ActionRetrain: the cache has expired; retrain at Due, ahead of the
	// next expected fork.
	ActionRetrain Action = "retrain"
	// ActionRetired: the base is no longer used.
	ActionRetired Action = "retired"
)

// Decision is Decide's answer: the action, when it is due and a sentence
// the operator reads.
type Decision struct {
	Action    Action
	Due       time.Time
	ExpiresAt time.Time // when the cache expires without another hit
	// Pings is how many keep-warm pings the gap until the next expected
	// fork needs; PingCost and RetrainCost are the estimates weighed.
	Pings       int
	PingCost    float64
	RetrainCost float64
	// Units is "$" when the model has a price, "tokens" when the costs are
	// relative weights in input-token equivalents (see relativePrice).
	Units  string
	Reason string
}

// pingTokens is the fork's own share of a keep-warm ping: a one-line
// prompt and a one-line answer.
var pingTokens = usage.Tokens{Input: 50, Output: 10}

// relativePrice weighs token columns when a model has no configured price:
// the ratios of the service's list prices (cache reads a tenth of input,
// 5-minute cache writes a quarter more, output five times), so the
// comparison between a ping and a retrain still holds.
var relativePrice = config.Price{Input: 1e6, Output: 5e6, CacheCreation: 1.25e6, CacheRead: 0.1e6}

// Decide computes what to do about base b's cache at now under p. It is a
// pure function: the same base, policy and instant always give the same
// decision.
//
// The cache expires CacheLifetime after the last hit. The next fork is
// expected ExpectedGap after it. While the cache is warm and the next fork
// is expected before it expires, wait. Otherwise keeping it warm takes one
// ping every CacheLifetime-PingLead until then, each reading the whole
// prefix at the cache-read price; if those pings cost less than training
// the base again, keep it warm, else let it expire. Once expired, retrain
// PingLead ahead of the next expected fork (at once if that is past).
func Decide(b Base, p Policy, now time.Time) Decision {
	d := Decision{ExpiresAt: b.LastHitAt.Add(p.CacheLifetime)}
	if !b.RetiredAt.IsZero() {
		d.Action, d.Reason = ActionRetired, fmt.Sprintf("Retired at %s; forks start from a newer base.", clock(b.RetiredAt))
		return d
	}
	price, priced := p.Prices[b.Model]
	d.Units = "$"
	if !priced {
		price, d.Units = relativePrice, "tokens"
	}
	prefix, trainingCost := b.Training.Sum()
	d.PingCost = usage.Cost(price, usage.Tokens{CacheRead: prefix.Input + prefix.CacheCreation + prefix.CacheRead + prefix.Output}.Add(pingTokens))
	d.RetrainCost = usage.Cost(price, prefix)
	if priced && trainingCost > 0 {
		d.RetrainCost = trainingCost // what the service really charged, all models
	}
	// The next fork is expected a gap after the last real use. Counting
	// from the last hit would let each keep-warm ping push the expected
	// fork later, and the base would be pinged for ever.
	used := b.LastUsedAt
	if used.IsZero() {
		used = b.LastHitAt
	}
	next := used.Add(p.ExpectedGap)

	if !now.Before(d.ExpiresAt) && next.Before(d.ExpiresAt) {
		// The fork it was kept for never came: retraining now would pay
		// for a base nobody has asked for. The next fork retrains it.
		d.Action, d.Due = ActionLetExpire, d.ExpiresAt
		d.Reason = fmt.Sprintf("Expired at %s; the fork expected at %s never came, so it is not retrained ahead of time.",
			clock(d.ExpiresAt), clock(next))
		return d
	}
	if !now.Before(d.ExpiresAt) {
		d.Action, d.Due = ActionRetrain, later(now, next.Add(-p.PingLead))
		d.Reason = fmt.Sprintf("The cache expired at %s (no hit for %s); retrain by %s, before the next fork expected at %s, for about %s.",
			clock(d.ExpiresAt), p.CacheLifetime, clock(d.Due), clock(next), money(d.RetrainCost, d.Units))
		return d
	}
	if !next.After(d.ExpiresAt) {
		d.Action, d.Due = ActionWait, d.ExpiresAt
		d.Reason = fmt.Sprintf("Warm until %s; the next fork is expected at %s, before it expires.", clock(d.ExpiresAt), clock(next))
		return d
	}
	step := p.CacheLifetime - p.PingLead
	if step <= 0 {
		step = p.CacheLifetime
	}
	gap := next.Sub(d.ExpiresAt)
	d.Pings = int((gap + step - 1) / step)
	pings := float64(d.Pings) * d.PingCost
	if pings < d.RetrainCost {
		d.Action, d.Due = ActionKeepWarm, later(now, d.ExpiresAt.Add(-p.PingLead))
		d.Reason = fmt.Sprintf("Keep warm: %d ping(s) until the next fork at %s cost about %s, less than a retrain at %s; first ping at %s.",
			d.Pings, clock(next), money(pings, d.Units), money(d.RetrainCost, d.Units), clock(d.Due))
		return d
	}
	d.Action, d.Due = ActionLetExpire, d.ExpiresAt
	d.Reason = fmt.Sprintf("Let expire at %s: %d ping(s) until the next fork at %s would cost about %s, no less than a retrain at %s.",
		clock(d.ExpiresAt), d.Pings, clock(next), money(pings, d.Units), money(d.RetrainCost, d.Units))
	return d
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// clock formats an instant for a reason sentence.
func clock(t time.Time) string { return t.UTC().Format("15:04:05") }

// money formats a cost in its units.
func money(v float64, units string) string {
	if units == "$" {
		return fmt.Sprintf("$%.4f", v)
	}
	return fmt.Sprintf("%.0f input-token equivalents", v)
}

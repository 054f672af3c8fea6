package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Budget is the [budget] section: how much a task, and all tasks in one
// day, may spend, priced by [prices].
//
//	[budget]
//	task = "5 USD"   # a task that has spent this is parked at the end of its turn
//	day = "50 USD"   # once the day's spend reaches this, nothing new starts until tomorrow
type Budget struct {
	// Task is what one task may spend over all its sessions; zero means
	// no limit.
	Task Money `toml:"task"`
	// Day is what every task together may spend in one calendar day of
	// the engine's clock; zero means no limit.
	Day Money `toml:"day"`
}

// Money is an amount in US dollars, written "5 USD" in orchestra.toml
// ("5", "$5" and "5 usd" are read too). Prices are in US dollars, so no
// other currency is accepted.
type Money float64

// USD is the amount in US dollars.
func (m Money) USD() float64 { return float64(m) }

// String is the amount as orchestra.toml writes it, e.g. "0.05 USD".
func (m Money) String() string {
	return strconv.FormatFloat(float64(m), 'f', -1, 64) + " USD"
}

// MarshalText writes the amount as String does.
func (m Money) MarshalText() ([]byte, error) { return []byte(m.String()), nil }

// UnmarshalText reads "5 USD", "5 usd", "$5" or "5".
func (m *Money) UnmarshalText(b []byte) error {
	s := strings.TrimSpace(string(b))
	num := strings.TrimPrefix(s, "$")
	if f := strings.Fields(num); len(f) == 2 {
		if !strings.EqualFold(f[1], "USD") {
			return fmt.Errorf("%q: the amount must be in USD, as [prices] are (e.g. \"5 USD\")", s)
		}
		num = f[0]
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%q is not an amount like \"5 USD\"", s)
	}
	*m = Money(v)
	return nil
}

// maxBudget bounds a budget: it exists to refuse a typo (a misplaced
// point), not to second-guess a spend.
const maxBudget = 1e6

// errors checks the section's ranges; name is used in the messages.
func (b Budget) errors(name string) []error {
	var errs []error
	for _, kv := range []struct {
		key string
		v   Money
	}{{"budget.task", b.Task}, {"budget.day", b.Day}} {
		if !(kv.v >= 0 && kv.v <= maxBudget) {
			errs = append(errs, fmt.Errorf("%s: %s = %q is out of range (0 to %g USD; 0 means no limit)", name, kv.key, kv.v.String(), float64(maxBudget)))
		}
	}
	return errs
}

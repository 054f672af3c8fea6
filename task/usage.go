package task

import (
	"fmt"
	"sort"
)

// The usage records below are what the usage package reads from the agents'
// own reports and what the store sums; they live here, in the contracts
// package, so the store needs neither the readers nor the config.

// Price is one model's price in US dollars per million tokens, per column,
// as orchestra.toml's [prices] table gives it.
type Price struct {
	Input         float64 `toml:"input"`
	Output        float64 `toml:"output"`
	CacheCreation float64 `toml:"cache_creation"`
	CacheRead     float64 `toml:"cache_read"`
}

// Tokens are token counts in the API's four columns.
type Tokens struct {
	Input         int64 `json:"input"`
	Output        int64 `json:"output"`
	CacheCreation int64 `json:"cache_creation"`
	CacheRead     int64 `json:"cache_read"`
}

// Add returns the column-wise sum.
func (t Tokens) Add(o Tokens) Tokens {
	return Tokens{t.Input + o.Input, t.Output + o.Output, t.CacheCreation + o.CacheCreation, t.CacheRead + o.CacheRead}
}

// IsZero reports whether every column is zero.
func (t Tokens) IsZero() bool { return t == Tokens{} }

// UsageRecord is one reply's usage as the agent recorded it.
type UsageRecord struct {
	// Model is the model id that answered, as the reply says (not the one
	// asked for).
	Model string `json:"model"`
	// MessageID identifies the reply; a transcript repeats a reply's usage
	// on every content block's line, and the id keeps it counted once.
	MessageID string `json:"message_id,omitempty"`
	Tokens    Tokens `json:"tokens"`
}

// Cost returns the price of tk in US dollars; prices are per million tokens.
func Cost(p Price, tk Tokens) float64 {
	return (float64(tk.Input)*p.Input + float64(tk.Output)*p.Output +
		float64(tk.CacheCreation)*p.CacheCreation + float64(tk.CacheRead)*p.CacheRead) / 1e6
}

// ModelTotals are one model's tokens and cost.
type ModelTotals struct {
	Tokens  Tokens  `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	// Priced is false when the price table has no entry for the model, so
	// its cost is unknown rather than zero.
	Priced bool `json:"priced"`
}

// UsageTotals sum usage records per model.
type UsageTotals struct {
	Models map[string]ModelTotals `json:"models"`
}

// Add counts r at the model's price in prices.
func (t *UsageTotals) Add(r UsageRecord, prices map[string]Price) {
	if t.Models == nil {
		t.Models = map[string]ModelTotals{}
	}
	m := t.Models[r.Model]
	m.Tokens = m.Tokens.Add(r.Tokens)
	p, ok := prices[r.Model]
	m.Priced = ok
	m.CostUSD = Cost(p, m.Tokens)
	t.Models[r.Model] = m
}

// Merge adds every model of o to t (o's costs as computed).
func (t *UsageTotals) Merge(o UsageTotals) {
	if t.Models == nil {
		t.Models = map[string]ModelTotals{}
	}
	for name, om := range o.Models {
		m, seen := t.Models[name]
		m.Tokens = m.Tokens.Add(om.Tokens)
		m.CostUSD += om.CostUSD
		m.Priced = om.Priced && (m.Priced || !seen)
		t.Models[name] = m
	}
}

// Sum returns the tokens and cost over every model.
func (t UsageTotals) Sum() (Tokens, float64) {
	var tk Tokens
	var cost float64
	for _, m := range t.Models {
		tk = tk.Add(m.Tokens)
		cost += m.CostUSD
	}
	return tk, cost
}

// ModelIDs returns the models, sorted.
func (t UsageTotals) ModelIDs() []string {
	out := make([]string, 0, len(t.Models))
	for name := range t.Models {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

// String is the one-line form the ledger and the console show, e.g.
// "claude-x: 1200 in, 80 out, 300 cache write, 4000 cache read, $0.0123".
func (t UsageTotals) String() string {
	if len(t.Models) == 0 {
		return "no usage reported"
	}
	s := ""
	for i, name := range t.ModelIDs() {
		m := t.Models[name]
		if i > 0 {
			s += "; "
		}
		cost := "no price configured"
		if m.Priced {
			cost = fmt.Sprintf("$%.4f", m.CostUSD)
		}
		s += fmt.Sprintf("%s: %d in, %d out, %d cache write, %d cache read, %s",
			name, m.Tokens.Input, m.Tokens.Output, m.Tokens.CacheCreation, m.Tokens.CacheRead, cost)
	}
	return s
}

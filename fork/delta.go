package fork

import (
	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/usage"
)

// Delta is a fork's cost beyond what its base already paid. A fork re-sends
// the base's conversation and reads it from the prompt cache; those cache
// reads are what it pays for the background instead of being taught again,
// and the rest is the block's own work.
type Delta struct {
	// Own is the fork's usage with the cache reads of the base's prefix
	// taken out: the block's own tokens and cost.
	Own usage.Totals `json:"own"`
	// PrefixTokens are the cache reads of the base's prefix, over every
	// request of the fork; PrefixCostUSD is what they cost.
	PrefixTokens  int64   `json:"prefix_tokens"`
	PrefixCostUSD float64 `json:"prefix_cost_usd"`
	// TrainingCostUSD is what teaching the background again would have
	// cost: the base's training.
	TrainingCostUSD float64 `json:"training_cost_usd"`
}

// prefixSize is the length of a base's conversation in tokens: everything
// it sent and received, which a fork sends again.
func prefixSize(b Base) int64 {
	tk, _ := b.Training.Sum()
	return tk.Input + tk.CacheCreation + tk.CacheRead + tk.Output
}

// delta splits the fork's records into the base's share and its own: each
// reply's cache reads up to the base's prefix size are the base's.
func delta(b Base, recs []usage.Record, prices map[string]config.Price) Delta {
	size := prefixSize(b)
	var d Delta
	var prefix usage.Totals
	for _, rec := range recs {
		share := min(rec.Tokens.CacheRead, size)
		own := rec
		own.Tokens.CacheRead -= share
		d.Own.Add(own, prices)
		prefix.Add(usage.Record{Model: rec.Model, Tokens: usage.Tokens{CacheRead: share}}, prices)
		d.PrefixTokens += share
	}
	_, d.PrefixCostUSD = prefix.Sum()
	_, d.TrainingCostUSD = b.Training.Sum()
	return d
}

package config

// DefaultPrices are the built-in prices, in US dollars per million tokens,
// of the models the built-in harnesses' CLIs use by default and of the
// models the scripted model servers (demo/modelstub) answer as. A
// [prices."MODEL"] table in orchestra.toml replaces one model's entry (all
// four columns: a column it leaves out is free); a model in neither is
// shown as "no price" rather than as free.
//
// The providers' list prices as published in 2026 (standard tier, prompts
// under 200k tokens, five-minute cache writes); they change, so a run that
// is billed should set its own. The stub models have round prices of
// their own, so a budget test spends dollars in a few replies.
func DefaultPrices() map[string]Price {
	return map[string]Price{
		// Anthropic (Claude Code).
		"claude-opus-4-5":   {Input: 5, Output: 25, CacheCreation: 6.25, CacheRead: 0.5},
		"claude-opus-4-1":   {Input: 15, Output: 75, CacheCreation: 18.75, CacheRead: 1.5},
		"claude-sonnet-4-5": {Input: 3, Output: 15, CacheCreation: 3.75, CacheRead: 0.3},
		"claude-sonnet-4":   {Input: 3, Output: 15, CacheCreation: 3.75, CacheRead: 0.3},
		"claude-haiku-4-5":  {Input: 1, Output: 5, CacheCreation: 1.25, CacheRead: 0.1},
		// OpenAI (Codex): cached input is a tenth of input; no cache-write price.
		"gpt-5":       {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-codex": {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5.5":     {Input: 1.25, Output: 10, CacheRead: 0.125},
		"gpt-5-mini":  {Input: 0.25, Output: 2, CacheRead: 0.025},
		// Google (Gemini CLI).
		"gemini-2.5-pro":   {Input: 1.25, Output: 10, CacheRead: 0.31},
		"gemini-2.5-flash": {Input: 0.3, Output: 2.5, CacheRead: 0.075},
		// The scripted model servers' models (demo/modelstub, the demo).
		"claude-demo-stub": stubPrice,
		"gpt-stub":         stubPrice,
		"gpt-demo-stub":    stubPrice,
		"gemini-stub":      stubPrice,
		"stub-model":       stubPrice,
	}
}

// stubPrice is the stub models' price: ten dollars per million input
// tokens, so a reply of a thousand tokens costs a cent.
var stubPrice = Price{Input: 10, Output: 50, CacheCreation: 12.5, CacheRead: 1}

package session

import "time"

// claudeEnv is what Claude Code needs beyond DefaultEnv: its provider's
// endpoint and key, its config directory and the proxies it may go through.
var claudeEnv = envWith("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CONFIG_DIR",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY")

// claudeSetEnv keeps Claude Code from phoning home for anything but the
// model itself.
var claudeSetEnv = map[string]string{
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
	"DISABLE_TELEMETRY":                        "1",
}

// claudePending matches Claude Code's prompt box holding input: the upper
// rule, "❯" and text that is not a `Try "` suggestion, its wrapped lines,
// the lower rule.
const claudePending = `(?m)^─{3,}[^\n]*\n❯[ \x{a0}](?:[^\s\x{a0}T]|T[^r\n]|Tr[^y\n]|Try[^ \n])[^\n]*\n(?:  [^\n]*\n)*─{3,}`

// claudeQueued matches Claude Code's prompt box showing one of its hints
// in an empty box, so the input was taken: for queued messages (what was
// typed waits in its queue), and after an API error ("Resend your message
// to try again", "Once fixed, resend your message": 2.1.332's hints; the
// CLI took the brief, called its provider and was refused, and the submit
// key re-sent into that box would only resend a refused turn).
const claudeQueued = `(?m)^❯[ \x{a0}](?:Press up to edit queued messages|Resend your message to try again|Once fixed, resend your message)`

// claudeDialogs are the screens Claude Code stops at before its prompt,
// each matched on text found in 2.1.332's own binary; the API key and the
// trust dialogs were seen in a pane (ANTHROPIC_API_KEY not yet approved,
// a folder not yet trusted).
var claudeDialogs = []Dialog{
	{Name: "API key", Match: `Detected a custom API key in your environment`},
	{Name: "trust this folder", Match: `Is this a project you created or one you trust`},
	{Name: "login", Match: `Select login method`},
	{Name: "theme", Match: `Choose the text style`},
	{Name: "update", Match: `Update available`},
	{Name: "no connection", Match: `Unable to connect to Anthropic services`},
}

// claudeLimits are how Claude Code shows its provider's refusals. With an
// API key, 2.1.332 shows a 429 as "API Error: Request rejected (429) ·
// This request would exceed your account's rate limit. Please try again
// later." and offers "Resend your message to try again" in its prompt
// (seen in a pane against the stub's rate_limit_error with
// anthropic-ratelimit-unified-* headers); it does not retry a 429 itself,
// and names no reset; its transcript records the error (apiErrorStatus
// 429, error "rate_limit") but not the reset either. A reset within about
// a minute it waits for itself:
// against the same 429 with its reset 60 s ahead it shows "✻ 5-hour limit
// reached · retrying in 1m 3s (1:50pm) · attempt 1/10" and goes on at the
// reset (seen; 90 s ahead gives the error above). A subscription's "usage
// limit reached · resets 3pm" and the 529 texts are from its binary.
var claudeLimits = []LimitSign{
	{Kind: LimitUsage, Match: `(?i)(?:usage limit reached|You've hit your (?:\w+ )?limit|\b(?:\d+-hour|weekly) limit reached)`},
	{Kind: LimitRate, Match: `API Error: (?:Request rejected \(429\)|429\b)`},
	{Kind: LimitOverloaded, Match: `API Error: (?:Repeated 529|529\b|[^\n]*overloaded)|The API is at capacity`},
	{Kind: LimitLogin, Match: `OAuth token has expired|Please run /login`},
}

// claudeRetry is Claude Code's own retry after a refusal: "· retrying in
// 1m 3s (1:50pm) · attempt 1/10", "Retrying in 5s… (attempt 2/10)".
const claudeRetry = `(?i)retrying in [^\n]*attempt \d+/\d+`

// claudeTested is the oldest and the newest Claude Code release the claude
// harnesses are proven against (the demo and the e2e tests in CI).
var claudeTested = []string{"2.1.197", "2.1.332"}

// Claude Code, interactive (`claude`) and one-shot (`claude -p`).
func init() {
	registerBuiltin("claude", Spec{
		Argv:     []string{"claude", "--model", "{{model}}", "--allowedTools", "Bash", "Edit", "Write", "Read"},
		Env:      claudeEnv,
		SetEnv:   claudeSetEnv,
		Delivery: DeliveryType,
		// The prompt line between its two horizontal rules: a bare "❯"
		// also starts the selected line of Claude Code's dialogs (trust,
		// onboarding), and a brief typed into one is lost.
		Ready:  `(?m)^─{3,}[ ]*\n[ ]*❯[^\n]*\n─{3,}`,
		Submit: `\r`,
		// Text in the prompt box, between its two rules, is input not yet
		// submitted: a long paste collapses into "[Pasted text #1 +81
		// lines]", a short one (a refusal, a correction) shows as itself.
		// 2.1.197 drops a submit key sent with a paste, long or short, and
		// takes the next one. The prompt's "❯" is followed by a no-break
		// space; a suggestion it may show in an empty box starts with
		// `Try "`. A message in the history above starts with "❯" too, but
		// has no rule right above it and below it.
		Pending: claudePending,
		// While it works, input submitted into its box joins a queue of
		// its own, sent with the next tool result or when the turn ends;
		// the box then reads "Press up to edit queued messages" (2.1.197
		// and 2.1.332), which is input taken, not input left unsent.
		Queued:        claudeQueued,
		Quiet:         Duration{time.Second},
		LaunchTimeout: Duration{60 * time.Second},
		Resubmit:      ResubmitSubmit,
		// Its spinner, with the elapsed time ("✻ Thinking… (3s · esc to
		// interrupt)") and, in a turn's first seconds, without it
		// ("✢ Crunching…"): neither is progress.
		// 2.1.332 also animates its logo, drawn in block elements beside
		// "Claude Code vX" in an idle pane (harness check's idle check
		// saw it change, now and then).
		Volatile: []string{
			`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏✢✳✶✻✽·*]\s*\S+…?\s*\(\d+s[^)]*\)`,
			`[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏✢✳✶✻✽·*] \S+…`,
			`[\x{2580}-\x{259F}]+`,
		},
		Capabilities: []string{"code"},
		Usage:        UsageClaudeTranscript,
		Trust:        TrustClaudeProjects,
		Dialogs:      claudeDialogs,
		Limits:       claudeLimits,
		LimitRetry:   claudeRetry,
		Tested:       claudeTested,
	})
	// `claude -p BRIEF` runs one turn and exits. It shows nothing until it
	// has finished, so it has no ready marker: it is confirmed once it runs,
	// and its phase finishes on the artifact and sentinel it leaves,
	// whatever its exit status. The brief follows -p as the prompt
	// argument (--allowedTools takes every argument up to the next flag).
	registerBuiltin("claude-print", Spec{
		Argv:          []string{"claude", "--model", "{{model}}", "--allowedTools", "Bash", "Edit", "Write", "Read", "-p"},
		Env:           claudeEnv,
		SetEnv:        claudeSetEnv,
		Delivery:      DeliveryArg,
		Submit:        `\r`,
		Quiet:         Duration{time.Second},
		LaunchTimeout: Duration{60 * time.Second},
		Resubmit:      ResubmitSubmit,
		Capabilities:  []string{"code"},
		Usage:         UsageClaudeTranscript,
		Trust:         TrustClaudeProjects,
		Limits:        claudeLimits,
		LimitRetry:    claudeRetry,
		Tested:        claudeTested,
	})
}

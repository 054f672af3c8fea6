package session

import "time"

// The built-in harnesses of the agent CLIs other than Claude Code: Codex
// (@openai/codex), Gemini CLI (@google/gemini-cli) and opencode
// (opencode-ai). Every value here was measured with the real CLI in a pty
// against demo/modelstub (versions in .ci/install-agents.sh); the
// real-CLI tests in e2e/ run each of them through a whole task.

// Usage sources of the agent CLIs.
const (
	// UsageCodexRollout reads Codex's session rollout files: JSON lines
	// under $CODEX_HOME/sessions (by default ~/.codex/sessions), one
	// token_usage_record per model response.
	UsageCodexRollout UsageSource = "codex-rollout"
	// UsageGeminiChat reads Gemini CLI's chat records: JSON lines under
	// ~/.gemini/tmp/<project>/chats, each reply with its tokens.
	UsageGeminiChat UsageSource = "gemini-chat"
	// UsageOpenCodeDB reads opencode's SQLite database
	// ($XDG_DATA_HOME/opencode/opencode.db) when the session ends.
	UsageOpenCodeDB UsageSource = "opencode-db"
)

// usageSources lists every usage source a harness may name.
var usageSources = []UsageSource{UsageClaudeTranscript, UsageCodexRollout, UsageGeminiChat, UsageOpenCodeDB}

// The oldest and the newest release each built-in was measured with
// (.ci/install-agents.sh installs it for the real-CLI tests; one release
// so far for each); harness check says whether the installed one is in
// the range.
var (
	codexTested    = []string{"0.171.0", "0.171.0"}
	geminiTested   = []string{"0.61.0", "0.61.0"}
	opencodeTested = []string{"1.18.33", "1.18.33"}
)

// codexLimits are how Codex shows its provider's refusals. 0.171.0 shows a
// 429 usage_limit_reached as "■ You’ve hit your usage limit. Upgrade to
// Pro (…) or try again at 5:13 AM." (seen against the stub, its reset 90 s
// ahead, to the minute) and waits at its prompt; the others are from its
// binary.
var codexLimits = []LimitSign{
	{Kind: LimitUsage, Match: `You.ve hit your usage limit|You.ve reached your workspace credit limit`},
	{Kind: LimitRate, Match: `exceeded retry limit, last status: 429`},
	{Kind: LimitOverloaded, Match: `(?i)server overloaded`},
	{Kind: LimitLogin, Match: `re-authorization required|Token refresh not possible`},
}

// geminiLimits are how Gemini CLI shows its provider's refusals. 0.61.0
// shows a 429 RESOURCE_EXHAUSTED (with its RetryInfo) as "Usage limit
// reached for gemini-stub." above a "● 1. Keep trying / 2. Stop" choice,
// and waits there without naming the reset (seen against the stub); its
// logs.json and chat file under ~/.gemini/tmp record nothing of it.
var geminiLimits = []LimitSign{
	{Kind: LimitUsage, Match: `Usage limit reached for`},
	{Kind: LimitRate, Match: `(?i)rate limit exceeded|Quota exceeded for`},
	{Kind: LimitOverloaded, Match: `(?i)model is overloaded`},
	{Kind: LimitLogin, Match: `(?i)please re-?authenticate|login expired`},
}

// opencodeLimits are how opencode shows its provider's refusals. 1.18.33
// retries a 429 or 5xx by itself, forever, at the provider's retry-after
// (else a doubling backoff), and shows the provider's message in its status
// line with the retry: against the stub's OpenAI rate_limit_exceeded (reset
// 90 s ahead) "■■⬝⬝ Rate limit reached for requests. Please try again in
// 87s. [retrying in 1m 22s attempt #1]  esc interrupt", then at the reset
// it goes on by itself (seen). An OpenAI insufficient_quota (429, no
// retry-after) it retries too, with a doubling backoff, its bar drawn over
// the message's first spaces and the line cut at the pane's edge: "■You■
// exceeded your current quota, please check your plan and billing details.
// For… (click to expand) [retrying in 4s" (seen). Its OpenAI provider's
// "Quota exceeded. …" (not retried), the overload and the login messages
// are from its binary.
var opencodeLimits = []LimitSign{
	{Kind: LimitUsage, Match: `Quota exceeded\. Check your plan and billing details|exceeded your current quota|[Uu]sage limit reached\. It will reset in|Free usage exceeded, subscribe to Go`},
	{Kind: LimitRate, Match: `Rate limit reached for|Too Many Requests|(?i:rate limit exceeded)`},
	{Kind: LimitOverloaded, Match: `Provider is overloaded|(?i:server is (?:currently )?overloaded)`},
	{Kind: LimitLogin, Match: `token may be missing or expired|Incorrect API key provided|opencode auth login`},
}

// opencodeRetry is opencode's own retry in its status line: "[retrying
// attempt #1]", then "[retrying in 1m 22s attempt #1]", cut at the pane's
// edge after a long message.
const opencodeRetry = `\[retrying\b`

// geminiPending matches a Gemini CLI screen whose input box holds text: a
// prompt line (" * ", " > " or " ! " then a non-blank) after which no
// other prompt line follows. Lines of its history start with "  " or with
// a prompt followed by its message, and the input box is always drawn
// below them all.
const geminiPending = `(?:\A|\n) [>*!] [^ \n][^\n]*` +
	`(?:\n(?:[^ \n][^\n]*| [^>*!\n][^\n]*| [>*!](?:[^ \n][^\n]*)?| )?)*\z`

// agentEnv is the allow-list of every agent CLI harness: what a terminal
// program needs, plus the network settings a user behind a proxy needs.
var agentEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "LANG", "LC_*", "TMPDIR",
	"HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "SSL_CERT_FILE"}

func withEnv(own ...string) []string { return append(append([]string(nil), agentEnv...), own...) }

// agentSpecs returns the built-in agent CLI harnesses, keyed by name.
func agentSpecs() map[string]Spec {
	codexEnv := withEnv("CODEX_HOME", "OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY")
	// Gemini CLI trusts the folder it runs in when this is set, for that
	// process only: every session runs in a worktree the product made.
	geminiSetEnv := func() map[string]string { return map[string]string{"GEMINI_CLI_TRUST_WORKSPACE": "true"} }
	geminiEnv := withEnv("GEMINI_CLI_HOME", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL",
		"GOOGLE_CLOUD_PROJECT", "GOOGLE_CLOUD_LOCATION", "GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_APPLICATION_CREDENTIALS")
	opencodeEnv := withEnv("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME",
		"OPENCODE_CONFIG", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENROUTER_API_KEY")
	return map[string]Spec{
		// Codex in its terminal UI. --no-daemon keeps it from starting a
		// detached `codex app-server` that outlives the session (and whose
		// stale lock breaks the next launch); -s workspace-write -a never
		// lets it write in its worktree and run commands without asking.
		"codex": {
			Argv:     []string{"codex", "--no-daemon", "-s", "workspace-write", "-a", "never"},
			Env:      codexEnv,
			Delivery: DeliveryType,
			// The footer of its idle prompt. A directory it does not trust
			// shows a "Trust this folder?" dialog instead, whose
			// "› 1. Trust and continue" looks like a prompt.
			Ready:  `\? for shortcuts`,
			Submit: `\r`,
			// A long paste waits at the prompt as "[Pasted Content 3711
			// chars]" until it is submitted.
			Pending:       `(?m)^› \[Pasted Content \d+ chars\]`,
			Quiet:         Duration{time.Second},
			LaunchTimeout: Duration{60 * time.Second},
			Resubmit:      ResubmitSubmit,
			// "• Working (12s • esc to interrupt)": a ticking counter and
			// a blinking bullet (• and ◦), neither of them progress.
			// Its animated logo, drawn in braille, plays in an idle pane.
			Volatile:     []string{`[•◦] Working \([^)]*\)`, `[\x{2800}-\x{28FF}]+`},
			Capabilities: []string{"code"},
			Usage:        UsageCodexRollout,
			Trust:        TrustCodexProjects,
			Limits:       codexLimits,
			Tested:       codexTested,
		},
		// `codex exec BRIEF` runs one turn and exits; it starts no daemon.
		// It shows no prompt, so it has no ready marker: its phase finishes
		// on the artifact and sentinel it leaves. The brief follows "--",
		// so no brief is ever read as a flag. A one-shot CLI records its
		// last reply as it finishes: a longer quiet period lets it before a
		// finished phase stops the session.
		"codex-exec": {
			Argv:          []string{"codex", "exec", "--skip-git-repo-check", "-s", "workspace-write", "--"},
			Env:           codexEnv,
			Delivery:      DeliveryArg,
			Submit:        `\r`,
			Quiet:         Duration{3 * time.Second},
			LaunchTimeout: Duration{60 * time.Second},
			Resubmit:      ResubmitSubmit,
			Capabilities:  []string{"code"},
			Usage:         UsageCodexRollout,
			Trust:         TrustCodexProjects,
			Limits:        codexLimits,
			Tested:        codexTested,
		},
		// Gemini CLI in its terminal UI; --yolo runs its tools without a
		// dialog.
		"gemini": {
			Argv:     []string{"gemini", "--yolo"},
			Env:      geminiEnv,
			SetEnv:   geminiSetEnv(),
			Delivery: DeliveryType,
			Ready:    `Type your message or @path/to/file`,
			Submit:   `\r`,
			// Anything in its input box is input not yet taken: the last
			// prompt line on the screen (" * " with --yolo, " > " or " ! "
			// without) followed by text, where an empty box shows its
			// placeholder after two spaces. A long paste shows as
			// "[Pasted Text: 8 lines]", a short one as its text. Gemini
			// CLI turns a submit key that arrives within 40 ms of a paste
			// into a newline (its guard against pasted keys), so the
			// submit sent with a paste is always lost and the re-send
			// is what submits.
			Pending:       geminiPending,
			Quiet:         Duration{time.Second},
			LaunchTimeout: Duration{90 * time.Second},
			Resubmit:      ResubmitSubmit,
			// "⠋ Thinking... (esc to cancel, 3s)": a braille spinner, a
			// phrase that changes every few seconds and a ticking counter,
			// masked as one from the start of the line (the spinner glyph
			// itself is already masked by the defaults when this runs).
			Volatile:     []string{`(?m)^[^\n(]*\(esc to cancel, [^)]*\)`},
			Capabilities: []string{"code"},
			Usage:        UsageGeminiChat,
			Limits:       geminiLimits,
			LimitResume:  LimitResumeSubmit,
			Tested:       geminiTested,
		},
		// `gemini --yolo -p BRIEF`: one turn, then exit.
		"gemini-print": {
			Argv:          []string{"gemini", "--yolo", "-p"},
			Env:           geminiEnv,
			SetEnv:        geminiSetEnv(),
			Delivery:      DeliveryArg,
			Submit:        `\r`,
			Quiet:         Duration{3 * time.Second},
			LaunchTimeout: Duration{90 * time.Second},
			Resubmit:      ResubmitSubmit,
			Capabilities:  []string{"code"},
			Usage:         UsageGeminiChat,
			Limits:        geminiLimits,
			Tested:        geminiTested,
		},
		// opencode in its terminal UI. Its permissions (edit, bash) come
		// from its own opencode.json; it starts no server of its own.
		"opencode": {
			Argv:     []string{"opencode"},
			Env:      opencodeEnv,
			Delivery: DeliveryType,
			// The placeholder of its empty prompt on the start screen.
			Ready:  `Ask anything`,
			Submit: `\r`,
			// A paste waits in the prompt as "[Pasted ~7 lines]"; a submit
			// key sent with it is dropped.
			Pending:       `\[Pasted ~\d+ lines?\]`,
			Quiet:         Duration{time.Second},
			LaunchTimeout: Duration{120 * time.Second},
			Resubmit:      ResubmitSubmit,
			// "⬝⬝■■■■⬝⬝  esc interrupt": a bar of squares sweeping while it
			// works.
			Volatile:     []string{`[⬝■]+\s+esc interrupt`},
			Capabilities: []string{"code"},
			Usage:        UsageOpenCodeDB,
			Limits:       opencodeLimits,
			LimitRetry:   opencodeRetry,
			Tested:       opencodeTested,
		},
		// `opencode run BRIEF`: one turn, then exit. It is the slowest of
		// the three to write its last reply.
		"opencode-run": {
			Argv:          []string{"opencode", "run"},
			Env:           opencodeEnv,
			Delivery:      DeliveryArg,
			Submit:        `\r`,
			Quiet:         Duration{5 * time.Second},
			LaunchTimeout: Duration{120 * time.Second},
			Resubmit:      ResubmitSubmit,
			Capabilities:  []string{"code"},
			Usage:         UsageOpenCodeDB,
			Limits:        opencodeLimits,
			LimitRetry:    opencodeRetry,
			Tested:        opencodeTested,
		},
	}
}

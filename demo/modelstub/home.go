package modelstub

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// StubAPIKey is the API key ClaudeEnv hands the CLI. The stub ignores it;
// SeedHome pre-approves it so the interactive CLI does not ask whether to
// use a key found in the environment.
const StubAPIKey = "sk-ant-api03-orchestra-modelstub-offline-key-0000000000AA"

// ConfigDirName is the directory under a seeded home that ClaudeEnv names
// as CLAUDE_CONFIG_DIR, so the CLI's settings, sessions and todos stay in
// the temporary home and never reach the user's ~/.claude.
const ConfigDirName = ".claude"

// SeedHome prepares home (a fresh temporary directory) for the Claude Code
// CLI to start without stopping at a first-run screen: onboarding completed,
// workdir's trust dialog accepted, the stub key approved, and the
// permission mode acceptEdits (see below; --permission-mode overrides it). It writes the
// global config both where the CLI looks with CLAUDE_CONFIG_DIR set and
// where it looks without it.
func SeedHome(home, workdir string) error {
	projects := map[string]any{}
	for _, dir := range projectKeys(workdir) {
		projects[dir] = map[string]any{
			"hasTrustDialogAccepted":        true,
			"hasCompletedProjectOnboarding": true,
			"projectOnboardingSeenCount":    1,
			"allowedTools":                  []string{},
		}
	}
	cfg := map[string]any{
		"hasCompletedOnboarding": true,
		"numStartups":            1,
		"theme":                  "dark",
		"autoUpdates":            false,
		// One-time notices and nudges that otherwise open over the prompt
		// after it first shows (observed with 2.1.332: "Make auto mode your
		// default permission mode?" appears a second after the prompt).
		"hasSeenAutoDefaultNudge":  true,
		"hasSeenAutoDefaultNotice": true,
		"hasSeenEffortMediumNudge": true,
		"hasSeenTasksHint":         true,
		"customApiKeyResponses": map[string]any{
			// The CLI remembers an approved key by its last 20 characters.
			"approved": []string{StubAPIKey[len(StubAPIKey)-20:]},
			"rejected": []string{},
		},
		"projects": projects,
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("seed claude home: %w", err)
	}
	confDir := filepath.Join(home, ConfigDirName)
	if err := os.MkdirAll(confDir, 0o700); err != nil {
		return fmt.Errorf("seed claude home: %w", err)
	}
	for _, path := range []string{filepath.Join(home, ".claude.json"), filepath.Join(confDir, ".claude.json")} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return fmt.Errorf("seed claude home: %w", err)
		}
	}
	// Claude Code 2.1.3xx starts in "auto" permission mode, which sets allow
	// rules such as --allowedTools Bash aside and asks a server-side
	// classifier the stub does not provide; the session then stops at a
	// dialog on the first Bash call. acceptEdits honours --allowedTools and
	// runs file edits in the working directory without asking.
	settings := []byte(`{"permissions": {"defaultMode": "acceptEdits"}}` + "\n")
	if err := os.WriteFile(filepath.Join(confDir, "settings.json"), settings, 0o600); err != nil {
		return fmt.Errorf("seed claude home: %w", err)
	}
	return nil
}

// projectKeys returns workdir as given and with symlinks resolved: the CLI
// keys projects by the directory it finds itself in, which may be either.
func projectKeys(workdir string) []string {
	keys := []string{workdir}
	if abs, err := filepath.Abs(workdir); err == nil && abs != workdir {
		keys = append(keys, abs)
	}
	if real, err := filepath.EvalSymlinks(workdir); err == nil && real != workdir {
		keys = append(keys, real)
	}
	return keys
}

// ClaudeEnv returns the whole environment for a Claude Code process that
// talks to the stub at baseURL and keeps its state under home. It starts
// from nothing but PATH so no credential or setting of the caller's leaks
// in; callers may append (later entries win).
func ClaudeEnv(home, baseURL string) []string {
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + home,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ConfigDirName),
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"TMPDIR=" + os.TempDir(),
		"TERM=xterm-256color",
		"LANG=C.UTF-8",
		"ANTHROPIC_BASE_URL=" + baseURL,
		"ANTHROPIC_API_KEY=" + StubAPIKey,
		// Keep the CLI off the network: no telemetry, error reports,
		// update checks or other traffic the stub does not serve.
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
		"DISABLE_TELEMETRY=1",
		"DISABLE_ERROR_REPORTING=1",
		"DISABLE_AUTOUPDATER=1",
		"DISABLE_BUG_COMMAND=1",
	}
}

// ClaudeSetEnv returns ClaudeEnv(home, baseURL) as a harness's set_env
// table, without PATH: a harness passes PATH through its allow-list, and the
// console's PATH is the one that finds the CLI and the project's tools.
func ClaudeSetEnv(home, baseURL string) map[string]string {
	out := map[string]string{}
	for _, kv := range ClaudeEnv(home, baseURL) {
		k, v, _ := strings.Cut(kv, "=")
		if k != "PATH" {
			out[k] = v
		}
	}
	return out
}

// Harness returns spec (the built-in "claude" harness, say) set up to run
// the CLI at bin against the stub at baseURL with home as its seeded HOME:
// argv[0] becomes bin and ClaudeSetEnv's variables become the harness's own
// set_env, so the console's environment is left as it is and the
// harness's allow-list still decides what else passes.
func Harness(spec session.Spec, bin, home, baseURL string) session.Spec {
	out := spec
	out.Argv = append([]string{bin}, spec.Argv[1:]...)
	out.SetEnv = map[string]string{}
	for k, v := range spec.SetEnv {
		out.SetEnv[k] = v
	}
	for k, v := range ClaudeSetEnv(home, baseURL) {
		out.SetEnv[k] = v
	}
	return out
}

package modelstub

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// opencode against the stub: a provider of its own in opencode.json, on the
// OpenAI-compatible SDK (Chat Completions at BASE/v1), chosen as the
// default model, with file edits and shell commands allowed so no
// permission dialog stops a scripted run. Its state (the SQLite database
// its usage is read from) stays under the seeded home's XDG directories.

// OpenCodeProvider and OpenCodeModel name the stub in opencode's config;
// the CLI's model is "PROVIDER/MODEL".
const (
	OpenCodeProvider = "orchestra-stub"
	OpenCodeModel    = "stub-model"
)

// SeedOpenCodeHome writes home/.config/opencode/opencode.json for an
// opencode that talks to the stub at baseURL.
func SeedOpenCodeHome(home, baseURL string) error {
	cfg := map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"autoupdate": false,
		"share":      "disabled",
		// No snapshots: before each step opencode copies the worktree
		// into a git repository of its own for undo, seconds of work on a
		// loaded machine; the console keeps its own checkpoints.
		"snapshot":   false,
		"model":      OpenCodeProvider + "/" + OpenCodeModel,
		"permission": map[string]any{"edit": "allow", "bash": "allow", "webfetch": "deny"},
		"provider": map[string]any{
			OpenCodeProvider: map[string]any{
				"npm":     "@ai-sdk/openai-compatible",
				"name":    "orchestra model stub",
				"options": map[string]any{"baseURL": strings.TrimRight(baseURL, "/") + "/v1", "apiKey": "orchestra-stub-key"},
				"models":  map[string]any{OpenCodeModel: map[string]any{"name": "stub model", "tool_call": true}},
			},
		},
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return fmt.Errorf("seed opencode home: %w", err)
	}
	dir := filepath.Join(home, ".config", "opencode")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("seed opencode home: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode.json"), append(data, '\n'), 0o600); err != nil {
		return fmt.Errorf("seed opencode home: %w", err)
	}
	return seedOpenCodePluginDeps(dir)
}

// seedOpenCodePluginDeps keeps opencode off the network. At every start it
// installs @opencode-ai/plugin (for the user's own plugins to import) into
// each config directory with its embedded npm, fetching it from
// registry.npmjs.org, unless the directory has a node_modules and a
// package-lock.json whose root already depends on every package it would
// add (opencode 1.18.33, Npm.install). Offline the fetch fails after a
// few DNS lookups and opencode goes on without it; the seeded homes
// have no plugins, so this lock says the dependency is in place and no
// fetch is tried at all.
func seedOpenCodePluginDeps(dir string) error {
	if err := os.MkdirAll(filepath.Join(dir, "node_modules"), 0o700); err != nil {
		return fmt.Errorf("seed opencode home: %w", err)
	}
	lock := `{
  "name": "opencode",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {"": {"dependencies": {"@opencode-ai/plugin": "*"}}}
}
`
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(lock), 0o600); err != nil {
		return fmt.Errorf("seed opencode home: %w", err)
	}
	return nil
}

// OpenCodeSetEnv returns the variables an opencode seeded in home needs:
// its XDG directories under home, and no model catalogue fetch or update.
func OpenCodeSetEnv(home string) map[string]string {
	return map[string]string{
		"XDG_CONFIG_HOME":               filepath.Join(home, ".config"),
		"XDG_DATA_HOME":                 filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME":                filepath.Join(home, ".cache"),
		"XDG_STATE_HOME":                filepath.Join(home, ".local", "state"),
		"OPENCODE_DISABLE_MODELS_FETCH": "1",
		"OPENCODE_DISABLE_AUTOUPDATE":   "1",
		"OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
		"TERM":                          "xterm-256color",
		"COLORTERM":                     "truecolor",
		"LANG":                          "C.UTF-8",
	}
}

package modelstub

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The Codex CLI against the stub: a CODEX_HOME whose config.toml names the
// stub as the model provider (the Responses API at BASE/v1) and trusts the
// working directory, so neither a login nor the "Trust this folder?" dialog
// stands between the CLI and its prompt.

// CodexProvider is the provider id SeedCodexHome configures.
const CodexProvider = "orchestra-stub"

// CodexKeyEnv is the variable the seeded provider reads its API key from.
const CodexKeyEnv = "ORCHESTRA_STUB_API_KEY"

// SeedCodexHome writes home/config.toml (home is the CLI's CODEX_HOME) for
// a Codex CLI that talks to the stub at baseURL with model, and trusts
// every directory in trusted (a trusted directory covers those under it).
func SeedCodexHome(home, baseURL, model string, trusted ...string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "model = %s\n", strconv.Quote(model))
	fmt.Fprintf(&b, "model_provider = %s\n", strconv.Quote(CodexProvider))
	// No update check, no analytics, no feedback upload: nothing the stub
	// does not serve.
	b.WriteString("check_for_update_on_startup = false\n")
	b.WriteString("[analytics]\nenabled = false\n")
	b.WriteString("[feedback]\nenabled = false\n")
	fmt.Fprintf(&b, "\n[model_providers.%s]\n", CodexProvider)
	b.WriteString("name = \"orchestra model stub\"\n")
	fmt.Fprintf(&b, "base_url = %s\n", strconv.Quote(strings.TrimRight(baseURL, "/")+"/v1"))
	fmt.Fprintf(&b, "env_key = %s\n", strconv.Quote(CodexKeyEnv))
	b.WriteString("wire_api = \"responses\"\n")
	// One attempt: a stub that stalls on purpose must not be asked again.
	b.WriteString("request_max_retries = 0\nstream_max_retries = 0\n")
	for _, dir := range trusted {
		for _, k := range projectKeys(dir) {
			fmt.Fprintf(&b, "\n[projects.%s]\ntrust_level = \"trusted\"\n", strconv.Quote(k))
		}
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return fmt.Errorf("seed codex home: %w", err)
	}
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(b.String()), 0o600); err != nil {
		return fmt.Errorf("seed codex home: %w", err)
	}
	return nil
}

// CodexSetEnv returns the variables a Codex CLI needs to run against the
// stub with codexHome as its CODEX_HOME, as a harness's set_env table.
func CodexSetEnv(codexHome string) map[string]string {
	return map[string]string{
		"CODEX_HOME": codexHome,
		CodexKeyEnv:  "orchestra-stub-key",
		"TERM":       "xterm-256color",
		"LANG":       "C.UTF-8",
		"COLORTERM":  "truecolor",
	}
}

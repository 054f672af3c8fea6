package modelstub

import (
	"fmt"
	"os"
	"path/filepath"
)

// The Gemini CLI against the stub: GOOGLE_GEMINI_BASE_URL points its
// generateContent calls at the stub, an API key in GEMINI_API_KEY with the
// auth type chosen in settings.json skips the login, and a fixed model
// (-m) skips the router that asks a small model to pick one.

// GeminiModel is the model a Gemini CLI against the stub is run with.
const GeminiModel = "gemini-stub"

// SeedGeminiHome writes home/.gemini/settings.json (home is the CLI's
// HOME, or GEMINI_CLI_HOME) so the CLI starts at its prompt: API-key auth,
// no folder-trust dialog, no telemetry, no update check.
func SeedGeminiHome(home string) error {
	dir := filepath.Join(home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("seed gemini home: %w", err)
	}
	settings := `{
  "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": false}},
  "privacy": {"usageStatisticsEnabled": false},
  "telemetry": {"enabled": false},
  "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
  "ui": {"hideTips": true, "hideBanner": true}
}
`
	if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(settings), 0o600); err != nil {
		return fmt.Errorf("seed gemini home: %w", err)
	}
	return nil
}

// GeminiSetEnv returns the variables a Gemini CLI needs to run against the
// stub at baseURL with home seeded by SeedGeminiHome.
func GeminiSetEnv(home, baseURL string) map[string]string {
	return map[string]string{
		"GEMINI_CLI_HOME":        home,
		"GEMINI_API_KEY":         "orchestra-stub-key",
		"GOOGLE_GEMINI_BASE_URL": baseURL,
		"TERM":                   "xterm-256color",
		"COLORTERM":              "truecolor",
		"LANG":                   "C.UTF-8",
	}
}

package session_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// Claude Code's global config gains the worktree's trust and keeps every
// other key, the worktree entry's other fields and its link; a second mark
// changes nothing. CLAUDE_CONFIG_DIR, where the session sets it, names the
// file's directory.
func TestMarkTrustedClaude(t *testing.T) {
	t.Parallel()
	spec := session.DefaultSpecs()["claude"]
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)

	home := t.TempDir()
	dotfiles := filepath.Join(t.TempDir(), "claude.json")
	require.NoError(t, os.WriteFile(dotfiles, []byte(`{"theme": "light", "numStartups": 7,
  "projects": {"/elsewhere": {"hasTrustDialogAccepted": true}, "`+dir+`": {"allowedTools": ["Bash"]}}}`), 0o600))
	require.NoError(t, os.Symlink(dotfiles, filepath.Join(home, ".claude.json")))
	env := []string{"HOME=" + home, "PATH=/bin"}
	require.NoError(t, session.MarkTrusted(spec, env, dir))
	fi, err := os.Lstat(filepath.Join(home, ".claude.json"))
	require.NoError(t, err)
	require.NotZero(t, fi.Mode()&os.ModeSymlink, "the link stays a link")
	var cfg map[string]any
	data, err := os.ReadFile(dotfiles)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &cfg))
	require.Equal(t, "light", cfg["theme"])
	require.EqualValues(t, 7, cfg["numStartups"])
	projects := cfg["projects"].(map[string]any)
	require.Equal(t, map[string]any{"hasTrustDialogAccepted": true}, projects["/elsewhere"])
	require.Equal(t, map[string]any{"allowedTools": []any{"Bash"}, "hasTrustDialogAccepted": true}, projects[dir])
	require.NoError(t, session.MarkTrusted(spec, env, dir))
	again, err := os.ReadFile(dotfiles)
	require.NoError(t, err)
	require.Equal(t, string(data), string(again))

	confDir := filepath.Join(t.TempDir(), "conf")
	require.NoError(t, session.MarkTrusted(spec, append(env, "CLAUDE_CONFIG_DIR="+confDir), dir))
	data, err = os.ReadFile(filepath.Join(confDir, ".claude.json"))
	require.NoError(t, err)
	require.JSONEq(t, `{"projects": {"`+dir+`": {"hasTrustDialogAccepted": true}}}`, string(data))
	fi, err = os.Stat(filepath.Join(confDir, ".claude.json"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// Codex's config gains a [projects."DIR"] table below the user's own text,
// once; a table of the user's that does not trust the folder is left as
// it is and said.
func TestMarkTrustedCodex(t *testing.T) {
	t.Parallel()
	spec := session.DefaultSpecs()["codex"]
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	codexHome := t.TempDir()
	own := "# mine\nmodel = \"gpt-x\"\n\n[projects.\"/elsewhere\"]\ntrust_level = \"trusted\"\n"
	path := filepath.Join(codexHome, "config.toml")
	require.NoError(t, os.WriteFile(path, []byte(own), 0o644))
	env := []string{"HOME=" + t.TempDir(), "CODEX_HOME=" + codexHome}
	require.NoError(t, session.MarkTrusted(spec, env, dir))
	require.NoError(t, session.MarkTrusted(spec, env, dir))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, own+"\n[projects."+`"`+dir+`"`+"]\ntrust_level = \"trusted\"\n", string(data))
	var cfg struct {
		Model    string
		Projects map[string]map[string]string
	}
	_, err = toml.Decode(string(data), &cfg)
	require.NoError(t, err)
	require.Equal(t, "trusted", cfg.Projects[dir]["trust_level"])

	require.NoError(t, os.WriteFile(path, []byte("[projects.\""+dir+"\"]\ntrust_level = \"untrusted\"\n"), 0o644))
	err = session.MarkTrusted(spec, env, dir)
	require.ErrorContains(t, err, `trust_level "untrusted"`)
}

// A harness with no trust store touches nothing.
func TestMarkTrustedNothing(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	require.NoError(t, session.MarkTrusted(session.DefaultSpecs()["opencode"], []string{"HOME=" + home}, t.TempDir()))
	entries, err := os.ReadDir(home)
	require.NoError(t, err)
	require.Empty(t, entries)
}

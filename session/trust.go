package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// TrustStore names where an agent CLI keeps the folders it trusts, asking
// "do you trust this folder?" in any other. The product marks the
// directories it makes for a session (a task's worktree, harness check's
// scratch directory) trusted there before the CLI starts, so the dialog
// never shows for them; nothing else in the file is changed.
type TrustStore string

// Trust stores a harness can name.
const (
	// TrustClaudeProjects is Claude Code's global config file,
	// $CLAUDE_CONFIG_DIR/.claude.json or ~/.claude.json: the entry
	// projects[DIR].hasTrustDialogAccepted.
	TrustClaudeProjects TrustStore = "claude-projects"
	// TrustCodexProjects is Codex's config file, $CODEX_HOME/config.toml
	// or ~/.codex/config.toml: the table [projects."DIR"] with
	// trust_level = "trusted".
	TrustCodexProjects TrustStore = "codex-projects"
)

// trustStores lists every trust store a harness may name.
var trustStores = []TrustStore{TrustClaudeProjects, TrustCodexProjects}

// trustMu keeps two launches of one engine from editing the same file at
// once (the later write would drop the earlier entry).
var trustMu sync.Mutex

// MarkTrusted records dir as trusted in the harness's trust store, as the
// session's environment (environ scrubbed by spec) locates it; a harness
// with no trust store is left alone. dir must be a directory the product
// made for the session.
func MarkTrusted(spec Spec, environ []string, dir string) error {
	if spec.Trust == "" {
		return nil
	}
	if environ == nil {
		environ = os.Environ()
	}
	env := ScrubEnv(environ, spec)
	keys := trustKeys(dir)
	trustMu.Lock()
	defer trustMu.Unlock()
	var err error
	switch spec.Trust {
	case TrustClaudeProjects:
		err = trustClaude(env, keys)
	case TrustCodexProjects:
		err = trustCodex(env, keys)
	default:
		err = fmt.Errorf("unknown trust store %q", spec.Trust)
	}
	if err != nil {
		return fmt.Errorf("harness %q: mark %s trusted: %w", spec.Name, dir, err)
	}
	return nil
}

// trustKeys returns dir made absolute and with its symlinks resolved: a CLI
// keys a folder by the real path it finds itself in.
func trustKeys(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		abs = dir
	}
	keys := []string{abs}
	if real, err := filepath.EvalSymlinks(abs); err == nil && real != abs {
		keys = append(keys, real)
	}
	return keys
}

// homeFile returns $override/name when the session sets override, else
// $HOME/rest.
func homeFile(env []string, override, name, rest string) (string, error) {
	if d := envValue(env, override); d != "" {
		return filepath.Join(d, name), nil
	}
	home := envValue(env, "HOME")
	if home == "" {
		return "", errors.New("the session has no HOME")
	}
	return filepath.Join(home, rest), nil
}

// trustClaude sets projects[key].hasTrustDialogAccepted in Claude Code's
// global config, keeping every other key as it was.
func trustClaude(env, keys []string) error {
	path, err := homeFile(env, "CLAUDE_CONFIG_DIR", ".claude.json", ".claude.json")
	if err != nil {
		return err
	}
	data, mode, err := readOptional(path)
	if err != nil {
		return err
	}
	cfg := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(data, &cfg); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	projects := map[string]map[string]json.RawMessage{}
	if raw, ok := cfg["projects"]; ok {
		if err := json.Unmarshal(raw, &projects); err != nil {
			return fmt.Errorf("%s: projects: %w", path, err)
		}
	}
	changed := false
	for _, k := range keys {
		entry := projects[k]
		if string(entry["hasTrustDialogAccepted"]) == "true" {
			continue
		}
		if entry == nil {
			entry = map[string]json.RawMessage{}
		}
		entry["hasTrustDialogAccepted"] = json.RawMessage("true")
		projects[k] = entry
		changed = true
	}
	if !changed {
		return nil
	}
	raw, err := json.Marshal(projects)
	if err != nil {
		return err
	}
	cfg["projects"] = raw
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, append(out, '\n'), mode)
}

// trustCodex appends a [projects."DIR"] table with trust_level = "trusted"
// to Codex's config for each key not trusted yet; the user's text stays
// as it was above it.
func trustCodex(env, keys []string) error {
	path, err := homeFile(env, "CODEX_HOME", "config.toml", filepath.Join(".codex", "config.toml"))
	if err != nil {
		return err
	}
	data, mode, err := readOptional(path)
	if err != nil {
		return err
	}
	var cfg struct {
		Projects map[string]struct {
			TrustLevel string `toml:"trust_level"`
		} `toml:"projects"`
	}
	if _, err := toml.Decode(string(data), &cfg); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var add strings.Builder
	for _, k := range keys {
		p, ok := cfg.Projects[k]
		if p.TrustLevel == "trusted" {
			continue
		}
		if ok {
			// The user has a table for it that does not trust it: a
			// second table would not parse, and their word stands.
			return fmt.Errorf("%s: [projects.%q] has trust_level %q; set it to \"trusted\" or remove the table", path, k, p.TrustLevel)
		}
		fmt.Fprintf(&add, "\n[projects.%s]\ntrust_level = \"trusted\"\n", tomlKey(k))
	}
	if add.Len() == 0 {
		return nil
	}
	out := append(append([]byte(nil), data...), add.String()...)
	if _, err := toml.Decode(string(out), &cfg); err != nil {
		return fmt.Errorf("%s: the trust entry would not parse there: %w", path, err)
	}
	return writeAtomic(path, out, mode)
}

// tomlKey quotes s as a TOML basic-string key.
func tomlKey(s string) string {
	b, _ := json.Marshal(s) // a JSON string is a TOML basic string for a path
	return string(b)
}

// readOptional reads path; a missing file reads as empty, with the mode a
// new one gets.
func readOptional(path string) ([]byte, fs.FileMode, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0o600, nil
	}
	if err != nil {
		return nil, 0, err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	return data, fi.Mode().Perm(), nil
}

// writeAtomic replaces path with data through a temporary file in its
// directory, so a CLI reading it never sees half a file.
func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real // a dotfile linked from elsewhere stays a link
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".orchestra-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// validTrust reports whether t is a trust store a harness may name.
func validTrust(t TrustStore) bool { return t == "" || slices.Contains(trustStores, t) }

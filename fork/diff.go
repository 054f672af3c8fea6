package fork

import (
	"fmt"
	"strings"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// Diff names the fields in which a fork's launch fingerprint differs from
// its base's, each with both values ("model: claude-a (base) vs claude-b");
// none when they hash alike. Any difference changes what the agent is sent,
// so the fork would not read the base from the prompt cache.
func Diff(base, fork session.Launch) []string {
	var out []string
	field := func(name, b, f string) {
		if b != f {
			out = append(out, fmt.Sprintf("%s: %s (base) vs %s", name, quote(b), quote(f)))
		}
	}
	list := func(vs []string) string { return strings.Join(vs, " ") }
	field("binary", base.Binary, fork.Binary)
	field("version", base.Version, fork.Version)
	field("model", base.Model, fork.Model)
	field("argv", list(base.Argv), list(fork.Argv))
	field("permission_mode", base.PermissionMode, fork.PermissionMode)
	field("allowed_tools", list(base.AllowedTools), list(fork.AllowedTools))
	field("dir", base.Dir, fork.Dir)
	field("agent_file", base.AgentFile, fork.AgentFile)
	field("size", fmt.Sprintf("%dx%d", base.Cols, base.Rows), fmt.Sprintf("%dx%d", fork.Cols, fork.Rows))
	field("env_names", list(base.EnvNames), list(fork.EnvNames))
	if len(out) == 0 && base.Hash != fork.Hash {
		out = append(out, fmt.Sprintf("hash: %s (base) vs %s", base.Short(), fork.Short()))
	}
	return out
}

func quote(s string) string {
	if s == "" {
		return "(none)"
	}
	return fmt.Sprintf("%q", s)
}

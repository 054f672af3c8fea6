package modelstub

import (
	"path/filepath"
	"strings"
)

// Agent CLIs other than Claude Code offer the model one tool that runs a
// shell command, under names and parameter shapes of their own. The stub's
// scripts speak in Claude Code's tools (Write, Read, Edit, Bash); for a CLI
// that offers none of them, each call is played as the equivalent shell
// command through the CLI's shell tool, so one script drives every CLI.

// shellTool is one CLI's shell tool: its name and how a command fills its
// arguments.
type shellTool struct {
	name string
	args func(command string) map[string]any
}

// shellTools lists the shell tools the stub knows, in the order it prefers
// them when a request offers several.
var shellTools = []shellTool{
	// Codex 0.171: exec_command {"cmd": "..."}.
	{"exec_command", func(c string) map[string]any { return map[string]any{"cmd": c} }},
	// Older Codex releases: shell {"command": ["bash", "-lc", "..."]}.
	{"shell", func(c string) map[string]any { return map[string]any{"command": []string{"bash", "-lc", c}} }},
	{"shell_command", func(c string) map[string]any { return map[string]any{"command": c} }},
	// Gemini CLI: run_shell_command {"command": "..."}.
	{"run_shell_command", func(c string) map[string]any { return map[string]any{"command": c} }},
	// opencode: bash {"command": "...", "description": "..."}.
	{"bash", func(c string) map[string]any {
		return map[string]any{"command": c, "description": "Run a shell command"}
	}},
}

// ShellToolName returns the name of the shell tool req offers, or "".
func (r Request) ShellToolName() string {
	if t, ok := r.shellTool(); ok {
		return t.name
	}
	return ""
}

func (r Request) shellTool() (shellTool, bool) {
	for _, t := range shellTools {
		if r.HasTool(t.name) {
			return t, true
		}
	}
	return shellTool{}, false
}

// IsMainLoop reports whether req comes from the CLI's main loop, the one
// that runs tools: it offers Claude Code's Write tool or a shell tool. Side
// requests (titles, summaries, quota probes) offer neither.
func (r Request) IsMainLoop() bool {
	return r.HasTool("Write") || r.ShellToolName() != ""
}

// adapt returns the tool calls of a reply as req's CLI can run them: as
// they are when the CLI offers the tool, otherwise as a call of its shell
// tool running the equivalent command.
func adapt(req Request, uses []ToolUse) []ToolUse {
	sh, ok := req.shellTool()
	if !ok {
		return uses
	}
	out := make([]ToolUse, 0, len(uses))
	for _, tu := range uses {
		if req.HasTool(tu.Name) {
			out = append(out, tu)
			continue
		}
		cmd, ok := ShellCommand(tu)
		if !ok {
			out = append(out, tu)
			continue
		}
		out = append(out, ToolUse{Name: sh.name, Input: sh.args(cmd)})
	}
	return out
}

// ShellCommand returns the shell command that does what a Claude Code tool
// call does: Bash runs its command, Write writes the file (making its
// directory), Read prints it, Edit replaces the one occurrence of
// old_string. It returns false for any other tool.
func ShellCommand(tu ToolUse) (string, bool) {
	str := func(k string) string { s, _ := tu.Input[k].(string); return s }
	switch tu.Name {
	case "Bash":
		return str("command"), true
	case "Write":
		p := str("file_path")
		return "mkdir -p " + quote(filepath.Dir(p)) + " && printf '%s' " + quote(str("content")) + " > " + quote(p), true
	case "Read":
		return "cat " + quote(str("file_path")), true
	case "Edit":
		// Go's own toolchain is there wherever the demo runs; a shell
		// edit that is exact about one occurrence needs no more.
		p := str("file_path")
		return "f=" + quote(p) + "; old=" + quote(str("old_string")) + "; new=" + quote(str("new_string")) +
			`; c=$(cat "$f"; printf x); c=${c%x}; case "$c" in *"$old"*) printf '%s' "${c%%"$old"*}$new${c#*"$old"}" > "$f";; *) echo "old_string not found in $f" >&2; exit 1;; esac`, true
	}
	return "", false
}

// quote single-quotes s for a POSIX shell.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

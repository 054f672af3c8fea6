package session

import (
	"fmt"
	"maps"
	"slices"
)

// DefaultEnv is the allow-list a harness gets when it names none: what a
// terminal program needs to find its tools, its home, its locale and its
// temporary directory, and nothing that could carry a secret. A built-in
// harness extends it with the variables of its own provider.
var DefaultEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_*", "TERM", "COLORTERM", "TMPDIR", "SHELL"}

// builtins holds the built-in harnesses by name. Each lives in a file of
// its own (builtin_claude.go, builtin_shell.go, ...) and adds itself with
// registerBuiltin from an init function, so a new agent CLI is one new
// file that touches nothing else.
var builtins = map[string]Spec{}

// registerBuiltin adds a built-in harness. A second harness of the same
// name is a programming error and panics at start-up.
func registerBuiltin(name string, s Spec) {
	if _, dup := builtins[name]; dup {
		panic(fmt.Sprintf("session: built-in harness %q registered twice", name))
	}
	s.Name = name
	builtins[name] = s
}

// envWith returns DefaultEnv followed by a harness's own variables.
func envWith(own ...string) []string {
	return append(slices.Clone(DefaultEnv), own...)
}

// DefaultSpecs returns the built-in harnesses, keyed by name: a fresh copy
// the caller may change. The argv placeholders {{self}}, {{script}},
// {{model}} are filled by Expand.
func DefaultSpecs() map[string]Spec {
	out := make(map[string]Spec, len(builtins))
	for name, s := range builtins {
		s.Argv = slices.Clone(s.Argv)
		s.Env = slices.Clone(s.Env)
		s.SetEnv = maps.Clone(s.SetEnv)
		s.Volatile = slices.Clone(s.Volatile)
		s.Capabilities = slices.Clone(s.Capabilities)
		s.Dialogs = slices.Clone(s.Dialogs)
		out[name] = s
	}
	return out
}

// BuiltinNames returns the names of the built-in harnesses, sorted.
func BuiltinNames() []string {
	return slices.Sorted(maps.Keys(builtins))
}

// The agent CLIs of builtin_agents.go join the table like any other file's.
func init() {
	for name, s := range agentSpecs() {
		registerBuiltin(name, s)
	}
}

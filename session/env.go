package session

import (
	"regexp"
	"sort"
	"strings"
	"sync"
)

// secretName matches variable names that look like they hold a secret.
var secretName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(secret|token|password|passwd|api_?key|credential|private)`)
})

// neverInherited are variables that would make an agent believe it runs
// inside another agent; they are dropped unless a spec names them exactly.
var neverInherited = map[string]bool{"CLAUDECODE": true, "CLAUDE_CODE_ENTRYPOINT": true}

// ScrubEnv returns the environment a session's program gets: the variables
// of environ that spec.Env allows (DefaultEnv when the spec names none),
// then TERM=xterm-256color and COLORTERM=truecolor (what the pane's
// emulator is), then spec.SetEnv, which may override both. Everything else
// is dropped.
//
// An Env entry is an exact name or a prefix pattern ending in "*". A name
// that looks like a secret, or one of the agent-nesting markers
// (CLAUDECODE, CLAUDE_CODE_ENTRYPOINT), is copied only when Env names it
// exactly: a pattern never lets a secret through. The result is sorted by
// name, so the same inputs always give the same environment.
func ScrubEnv(environ []string, spec Spec) []string {
	exact := map[string]bool{}
	var prefixes []string
	allow := spec.Env
	if allow == nil {
		allow = DefaultEnv
	}
	for _, e := range allow {
		if p, ok := strings.CutSuffix(e, "*"); ok {
			prefixes = append(prefixes, p)
		} else {
			exact[e] = true
		}
	}
	allowed := func(name string) bool {
		if exact[name] {
			return true
		}
		if neverInherited[name] || secretName().MatchString(name) {
			return false
		}
		for _, p := range prefixes {
			if strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	vars := map[string]string{}
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !allowed(name) {
			continue
		}
		vars[name] = value // a later duplicate wins, as exec.Cmd does
	}
	vars["TERM"] = "xterm-256color"
	vars["COLORTERM"] = "truecolor"
	for k, v := range spec.SetEnv {
		vars[k] = v
	}
	names := make([]string, 0, len(vars))
	for k := range vars {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]string, len(names))
	for i, k := range names {
		out[i] = k + "=" + vars[k]
	}
	return out
}

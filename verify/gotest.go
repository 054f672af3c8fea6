package verify

import (
	"regexp"
	"strings"
	"sync"
)

// goTestRE finds `go test` where a shell command starts: at the beginning
// of the command or after ;, &&, ||, |, ( or a newline.
var goTestRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[;&|(\n]\s*)go\s+test(\s|$)`) })

// GoTestJSON rewrites every `go test` the verify command runs as `go test
// -json -count=1`: -json so the gate counts tests rather than packages (the
// counter turns the events back into go test's text for the tail), and
// -count=1 so a cached result never passes for a re-run. A command that
// already asks for -json, or sets -count itself, keeps its own choice. A
// `go test` hidden in a script the command calls is not seen; its output is
// counted as go test's text is.
func GoTestJSON(command string) string {
	if !goTestRE().MatchString(command) {
		return command
	}
	add := ""
	if !strings.Contains(command, "-json") {
		add += " -json"
	}
	if !strings.Contains(command, "-count") {
		add += " -count=1"
	}
	if add == "" {
		return command
	}
	return goTestRE().ReplaceAllString(command, "${1}go test"+add+"${2}")
}

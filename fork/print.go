package fork

import (
	"fmt"
	"slices"

	"github.com/orchestra-tui/orchestra-tui/session"
)

// PrintSpec returns the print-mode form of an interactive harness spec
// (already expanded): the same binary, environment and flags with
// -p --output-format json after the binary, which is how Train and Fork
// run it. A flag whose value is empty ("--model" with no model given) is
// dropped rather than passed as "".
//
// Only a harness that reports usage through Claude Code's transcripts can
// be forked: resuming a conversation as a fork (--resume ID
// --fork-session) is Claude Code's.
func PrintSpec(spec session.Spec) (session.Spec, error) {
	if spec.Usage != session.UsageClaudeTranscript {
		return session.Spec{}, fmt.Errorf("harness %q cannot train a base: forking a conversation needs Claude Code (a harness with usage = %q)",
			spec.Name, session.UsageClaudeTranscript)
	}
	if len(spec.Argv) == 0 {
		return session.Spec{}, fmt.Errorf("harness %q has no argv", spec.Name)
	}
	out := spec
	argv := []string{spec.Argv[0]}
	rest := spec.Argv[1:]
	if !slices.Contains(rest, "-p") && !slices.Contains(rest, "--print") {
		argv = append(argv, "-p", "--output-format", "json")
	}
	for i := 0; i < len(rest); i++ {
		if rest[i] == "--model" && i+1 < len(rest) && rest[i+1] == "" {
			i++
			continue
		}
		argv = append(argv, rest[i])
	}
	out.Argv = argv
	return out, nil
}

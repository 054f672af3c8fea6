package main

import (
	"fmt"
	"io"
	"strings"
)

// commands are the subcommands an operator types, for "did you mean".
var commands = []string{
	"console", "run", "engine", "stop", "attach", "engines", "add", "status",
	"correct", "resubmit", "extend", "expire", "cancel", "park", "unpark",
	"approve", "retry", "merge", "prune", "config", "handoff", "fork", "demo",
	"model-stub", "agent", "harness", "version", "events", "help",
}

// unknownCommand says in one line that cmd is no command, with the closest
// ones (as git and cobra do) instead of the whole usage.
func unknownCommand(stderr io.Writer, cmd string) int {
	fmt.Fprintf(stderr, "orchestra-tui: unknown command %q (orchestra-tui --help lists them)\n", cmd)
	if s := suggest(cmd); len(s) > 0 {
		fmt.Fprintf(stderr, "\nDid you mean this?\n\t%s\n", strings.Join(s, "\n\t"))
	}
	return 2
}

// suggest returns the commands within two edits of typed, or that it is a
// prefix of (at least two letters), closest first.
func suggest(typed string) []string {
	typed = strings.ToLower(typed)
	var near [3][]string
	for _, c := range commands {
		d := editDistance(typed, c)
		switch {
		case d <= 2:
			near[d] = append(near[d], c)
		case len(typed) >= 2 && strings.HasPrefix(c, typed):
			near[2] = append(near[2], c)
		}
	}
	return append(append(near[0], near[1]...), near[2]...)
}

// editDistance is the Levenshtein distance between a and b, with a swap of
// two neighbours counting as one edit (stauts is one edit from status).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

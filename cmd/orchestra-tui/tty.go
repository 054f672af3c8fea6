package main

import (
	"fmt"
	"io"
	"os"

	"github.com/charmbracelet/x/term"
)

// noTerminal reports, with a message saying what to use instead, when the
// console cannot run because stdin or stdout is not a terminal (a pipe, a
// CI job, `ssh host cmd`): without this check the console would start and
// die with an error about its context or its input.
func noTerminal(stdout, stderr io.Writer, instead string) bool {
	if isTerminal(os.Stdin) && isTerminal(stdout) {
		return false
	}
	fmt.Fprintf(stderr, "orchestra-tui: the console needs a terminal (stdin and stdout are not both one); %s\n", instead)
	return true
}

func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(file.Fd())
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// newFlags returns a subcommand's flag set. Its -h prints the synopsis
// first, so a user who asks a subcommand for help learns its arguments as
// well as its flags.
func newFlags(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s\n", synopsis)
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(stderr, "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parseStatus is the exit status for a failed Parse: 0 when the user
// asked for help (-h), 2 for a usage error, as the go tool does.
func parseStatus(err error) int {
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	return 2
}

// usageError prints a usage error naming the subcommand and returns 2.
func usageError(stderr io.Writer, cmd, format string, args ...any) int {
	fmt.Fprintf(stderr, "orchestra-tui: %s: %s\n", cmd, fmt.Sprintf(format, args...))
	return 2
}

// isHelp reports whether arg asks for help.
func isHelp(arg string) bool {
	return arg == "-h" || arg == "-help" || arg == "--help" || arg == "help"
}

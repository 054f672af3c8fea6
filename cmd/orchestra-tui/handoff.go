package main

import (
	"fmt"
	"io"

	"github.com/orchestra-tui/orchestra-tui/coord"
)

func handoffCmd(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "orchestra-tui: handoff: not built yet")
	return 2
}

func resumeInto(o *coord.Opened, file, harness, model string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "orchestra-tui: run --resume: not built yet")
	return 2
}

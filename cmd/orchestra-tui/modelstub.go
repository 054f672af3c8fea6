package main

import (
	"fmt"
	"io"
)

func modelStubCmd(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "orchestra-tui: model-stub: not built yet")
	return 2
}

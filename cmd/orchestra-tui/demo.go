package main

import (
	"fmt"
	"io"
)

func demoCmd(args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "orchestra-tui: demo: not built yet")
	return 2
}

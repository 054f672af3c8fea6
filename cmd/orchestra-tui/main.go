// Command orchestra-tui is a terminal operator console for unattended runs of
// AI coding agents. This file holds flags and subcommands only.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "orchestra-tui: not yet wired")
	os.Exit(2)
}

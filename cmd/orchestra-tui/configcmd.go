package main

import (
	"fmt"
	"io"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/repo"
)

// configCmd prints orchestra.toml with every setting documented: the
// defaults, or the repository's effective configuration.
func configCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("config", "orchestra-tui config [--defaults] [-C DIR]   (print orchestra.toml with every setting, commented)", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	defaults := fs.Bool("defaults", false, "print the defaults (what a repository with no orchestra.toml gets), not this repository's settings")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		return parseStatus(err)
	}
	if len(rest) > 0 {
		return usageError(stderr, "config", "unexpected argument %q", rest[0])
	}
	cfg := config.Default()
	if !*defaults {
		r, err := repo.Open(*dir)
		if err != nil {
			return fail(stderr, err)
		}
		if cfg, err = config.Load(r.Root); err != nil {
			return fail(stderr, err)
		}
	}
	fmt.Fprint(stdout, config.Document(cfg))
	return 0
}

package main

import (
	"log"
	"os"
	"path/filepath"

	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/repo"
)

// inProcessLog is where the engine inside a console (--in-process) logs:
// engine.log, as the background engine does. On stderr its lines were
// drawn over the console while it ran and printed onto the shell after it
// quit (the stop's own lines).
func inProcessLog(dir string) (*log.Logger, func(), error) {
	r, err := repo.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	p := engine.PathsFor(r.Root)
	if err := os.MkdirAll(filepath.Dir(p.Log), 0o700); err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return log.New(f, "engine: ", log.LstdFlags), func() { f.Close() }, nil
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
)

// openStore opens the store the repository's configuration names (SQLite
// under .orchestra/, or the PostgreSQL database of [store] url or
// ORCHESTRA_STORE_URL), the same one the console and the engine use.
func openStore(ctx context.Context, r *repo.Repo) (store.Store, error) {
	cfg, err := config.Load(r.Root)
	if err != nil {
		return nil, err
	}
	st, _, err := coord.OpenStore(ctx, r.Root, cfg)
	return st, err
}

// noStoreError is a command that only reads finding no SQLite store.
type noStoreError struct{ path string }

func (e *noStoreError) Error() string {
	return fmt.Sprintf("no store in this repository: %s does not exist (no task was ever added here, or the store was deleted); `orchestra-tui add` adds a task and creates it", e.path)
}

// openExistingStore is openStore for a command that only reads (status,
// engines, handoff export) or acts on tasks that must already exist: a
// SQLite store that does not exist is a *noStoreError, never created. A
// store made here would hide a deleted one behind an empty list.
func openExistingStore(ctx context.Context, r *repo.Repo) (store.Store, error) {
	cfg, err := config.Load(r.Root)
	if err != nil {
		return nil, err
	}
	return openExisting(ctx, r, cfg)
}

// openExisting is openExistingStore with the configuration already loaded.
func openExisting(ctx context.Context, r *repo.Repo, cfg config.Config) (store.Store, error) {
	if cfg.Store.URL == "" && !coord.StoreURLSet() {
		path := sqlite.DefaultPath(r.Root)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, &noStoreError{path: path}
		}
	}
	st, _, err := coord.OpenStore(ctx, r.Root, cfg)
	return st, err
}

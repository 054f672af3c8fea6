package main

import (
	"context"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
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

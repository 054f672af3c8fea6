package coord

import (
	"context"
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/postgres"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
)

// StoreURLEnv names the environment variable that selects a PostgreSQL
// store in place of orchestra.toml's [store] url, so a password need not be
// committed to the repository.
const StoreURLEnv = "ORCHESTRA_STORE_URL"

// OpenStore opens the store a repository's configuration names: the
// PostgreSQL database of ORCHESTRA_STORE_URL or [store] url when either is
// set, else the SQLite file under root's .orchestra/. It returns the store
// and where it is, fit to print (a URL's password redacted). Every call of
// it that has no deadline of its own is bounded by [store] timeout.
func OpenStore(ctx context.Context, root string, cfg config.Config) (store.Store, string, error) {
	url := cfg.Store.URL
	if u := storeURLFromEnv(); u != "" {
		url = u
	}
	if url != "" {
		if !postgres.IsURL(url) {
			return nil, "", fmt.Errorf("%s must be a postgres:// URL; unset it for the SQLite store under .orchestra/", StoreURLEnv)
		}
		if err := checkTLS(url); err != nil {
			return nil, postgres.Redact(url), err
		}
		st, err := postgres.Open(ctx, url, postgres.CallTimeout(cfg.Store.Timeout.Duration))
		if err != nil {
			return nil, postgres.Redact(url), err
		}
		return st, st.Where(), nil
	}
	st, err := sqlite.Open(sqlite.DefaultPath(root), sqlite.CallTimeout(cfg.Store.Timeout.Duration))
	if err != nil {
		return nil, sqlite.DefaultPath(root), err
	}
	return st, st.Path(), nil
}

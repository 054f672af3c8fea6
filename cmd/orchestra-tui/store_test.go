package main

import (
	"bytes"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
)

// A repository whose orchestra.toml names a PostgreSQL store keeps its
// tasks there: add and status go to the database, and no SQLite file
// appears under .orchestra/.
func TestStoreURLSelectsPostgres(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	u, err := url.Parse(pgtest.Start(t).NewDatabase(t))
	require.NoError(t, err)
	// Trust authentication ignores the password; it must still never be
	// printed.
	u.User = url.UserPassword("postgres", "pw-never-printed")
	cfg := "[store]\nurl = \"" + u.String() + "\"\n"
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte(cfg), 0o644))

	code, stdout, stderr := cli(t, "add", "-C", root, "--title", "In Postgres", "--goal", "g", "--verify", "true")
	require.Equal(t, 0, code, stderr)
	require.Len(t, bytes.TrimSpace([]byte(stdout)), 26)

	code, stdout, stderr = cli(t, "status", "-C", root, "--json")
	require.Equal(t, 0, code, stderr)
	var rows []struct{ Title, State string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows))
	require.Len(t, rows, 1)
	require.Equal(t, "In Postgres", rows[0].Title)
	require.NotContains(t, stdout+stderr, "pw-never-printed")
	require.NoFileExists(t, filepath.Join(root, ".orchestra", "orchestra.db"))

	// A URL of another kind is refused by the config check, without
	// echoing it.
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte("[store]\nurl = \"mysql://u:secretpw@h/db\"\n"), 0o644))
	code, _, stderr = cli(t, "status", "-C", root)
	require.NotEqual(t, 0, code)
	require.Contains(t, stderr, "store.url must be a postgres:// URL")
	require.NotContains(t, stderr, "secretpw")
}

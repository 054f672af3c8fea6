package usage

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestOpenCodeRecords reads a database in opencode 1.18.33's shape: the
// replies in the working directory since the session started, and nothing
// of user turns, other directories or earlier sessions.
func TestOpenCodeRecords(t *testing.T) {
	t.Parallel()
	data, work := t.TempDir(), t.TempDir()
	recs, err := OpenCodeRecords(t.Context(), data, work, time.Time{})
	require.NoError(t, err)
	require.Empty(t, recs, "no database yet")

	require.NoError(t, os.MkdirAll(filepath.Join(data, "opencode"), 0o700))
	db, err := sql.Open("sqlite", filepath.Join(data, "opencode", "opencode.db"))
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec("CREATE TABLE message (id text PRIMARY KEY, session_id text NOT NULL, time_created integer NOT NULL, time_updated integer NOT NULL, data text NOT NULL)")
	require.NoError(t, err)
	start := time.UnixMilli(1796067715000)
	reply := func(cwd string, in, out, read int) string {
		return fmt.Sprintf(`{"role":"assistant","path":{"cwd":%q,"root":%q},"cost":0,"tokens":{"total":0,"input":%d,"output":%d,"reasoning":2,"cache":{"write":0,"read":%d}},"modelID":"stub-model","providerID":"stub"}`, cwd, cwd, in, out, read)
	}
	for i, row := range []struct {
		at   time.Time
		data string
	}{
		{start.Add(-time.Minute), reply(work, 1, 1, 1)}, // an earlier session
		{start.Add(time.Second), `{"role":"user","time":{"created":1}}`},
		{start.Add(2 * time.Second), reply(work, 7384, 67, 0)},
		{start.Add(3 * time.Second), reply("/elsewhere", 5, 5, 5)},
		{start.Add(4 * time.Second), reply(work, 7504, 41, 100)},
	} {
		_, err := db.Exec("INSERT INTO message VALUES (?, 's', ?, ?, ?)", fmt.Sprintf("msg_%d", i), row.at.UnixMilli(), row.at.UnixMilli(), row.data)
		require.NoError(t, err)
	}
	recs, err = OpenCodeRecords(t.Context(), data, work, start)
	require.NoError(t, err)
	require.Equal(t, []Record{
		{Model: "stub-model", MessageID: "msg_2", Tokens: Tokens{Input: 7384, Output: 69}},
		{Model: "stub-model", MessageID: "msg_4", Tokens: Tokens{Input: 7504, Output: 43, CacheRead: 100}},
	}, recs)
	require.Equal(t, filepath.Join("/h", ".local", "share"), OpenCodeDataDir([]string{"HOME=/h"}))
	require.Equal(t, "/x", OpenCodeDataDir([]string{"HOME=/h", "XDG_DATA_HOME=/x"}))
}

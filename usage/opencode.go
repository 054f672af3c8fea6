package usage

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // opencode keeps its sessions in SQLite
)

// opencode keeps every message in a SQLite database,
// $XDG_DATA_HOME/opencode/opencode.db (by default under
// ~/.local/share). Observed with opencode 1.18.33, each model reply is a
// row of the message table whose data is JSON:
//
//	{"role":"assistant","path":{"cwd":"/work/dir",...},"modelID":"m",
//	 "providerID":"p","tokens":{"input":7384,"output":67,"reasoning":0,
//	 "cache":{"write":0,"read":0}},"time":{"created":1796067721239,...}}
//
// Its input excludes the cached tokens (they are cache.read). The database
// is read once, when the session ends: opencode writes a reply's row as the
// reply completes, and the file is the CLI's, opened read-only.

type opencodeMessage struct {
	Role string `json:"role"`
	Path struct {
		Cwd string `json:"cwd"`
	} `json:"path"`
	ModelID string `json:"modelID"`
	Tokens  *struct {
		Input     int64 `json:"input"`
		Output    int64 `json:"output"`
		Reasoning int64 `json:"reasoning"`
		Cache     struct {
			Write int64 `json:"write"`
			Read  int64 `json:"read"`
		} `json:"cache"`
	} `json:"tokens"`
	Time struct {
		Created int64 `json:"created"`
	} `json:"time"`
}

// OpenCodeRecords returns the usage of every opencode reply in workdir
// created at or after since, from the database under dataDir (opencode's
// XDG data directory, holding opencode/opencode.db). No database yet means
// no replies.
func OpenCodeRecords(ctx context.Context, dataDir, workdir string, since time.Time) ([]Record, error) {
	path := filepath.Join(dataDir, "opencode", "opencode.db")
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return nil, fmt.Errorf("read opencode usage: %w", err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, `SELECT id, data FROM message WHERE time_created >= ? ORDER BY time_created, id`, since.UnixMilli())
	if err != nil {
		return nil, fmt.Errorf("read opencode usage from %s: %w", path, err)
	}
	defer rows.Close()
	want := cleanDir(workdir)
	var out []Record
	for rows.Next() {
		var id, data string
		if err := rows.Scan(&id, &data); err != nil {
			return nil, fmt.Errorf("read opencode usage: %w", err)
		}
		var m opencodeMessage
		if json.Unmarshal([]byte(data), &m) != nil || m.Role != "assistant" || m.Tokens == nil || m.ModelID == "" {
			continue
		}
		if want != "" && cleanDir(m.Path.Cwd) != want {
			continue
		}
		t := m.Tokens
		out = append(out, Record{Model: m.ModelID, MessageID: id, Tokens: Tokens{
			Input: t.Input, Output: t.Output + t.Reasoning, CacheCreation: t.Cache.Write, CacheRead: t.Cache.Read,
		}})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read opencode usage: %w", err)
	}
	return out, nil
}

// OpenCodeDataDir returns opencode's XDG data directory for environment
// env: XDG_DATA_HOME, else $HOME/.local/share; "" when neither is set.
func OpenCodeDataDir(env []string) string {
	var home string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "XDG_DATA_HOME="); ok && v != "" {
			return v
		}
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".local", "share")
}

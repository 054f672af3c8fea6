package main

import (
	"context"
	"encoding/json"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/engine"
)

// An engine records itself in the store while it runs and says so when it
// stops; `engines` shows both.
func TestEnginesListsTheRunningAndTheStopped(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	code, stdout, stderr := cli(t, "engines", "-C", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "no engine has run on this store yet")

	e, err := engine.Start(context.Background(), engine.Params{Dir: root, Version: "v-test"})
	require.NoError(t, err)
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = e.Stop()
		}
	})

	type row struct {
		ID, Host, Version, Repo, State string
		Pid, Slots, Busy               int
		HeartbeatAt                    time.Time `json:"heartbeat_at"`
	}
	list := func() []row {
		code, stdout, stderr := cli(t, "engines", "-C", root, "--json")
		require.Equal(t, 0, code, stderr)
		var rows []row
		require.NoError(t, json.Unmarshal([]byte(stdout), &rows), stdout)
		return rows
	}
	// The first beat is written before the engine loads its tasks, so it
	// is there once Start returns.
	rows := list()
	require.Len(t, rows, 1)
	host, _ := os.Hostname()
	require.Equal(t, os.Getpid(), rows[0].Pid)
	require.Equal(t, host, rows[0].Host)
	require.Equal(t, "v-test", rows[0].Version)
	require.Equal(t, e.Holder(), rows[0].ID)
	require.Equal(t, "running", rows[0].State)
	require.Positive(t, rows[0].Slots)

	require.NoError(t, e.Stop())
	stopped = true
	rows = list()
	require.Len(t, rows, 1)
	require.Equal(t, "stopped", rows[0].State)

	code, stdout, _ = cli(t, "engines", "-C", root)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "HOST")
	require.Contains(t, stdout, "stopped")
}

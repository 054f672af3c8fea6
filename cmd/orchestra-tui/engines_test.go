package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/store"
)

// An engine records itself in the store while it runs and says so when it
// stops; `engines` shows both.
func TestEnginesListsTheRunningAndTheStopped(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	code, stdout, stderr := cli(t, "engines", "-C", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "no engines: no store in this repository")

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

// An engine is shown as gone at the age [fleet] ttl names, the age at
// which the other engines take its leases, not at a constant.
func TestEnginesJudgesGoneByFleetTTL(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	// A heartbeat two minutes old, from an engine that never said it
	// stopped: gone under the default ttl (30s), alive under ttl = "10m".
	now := time.Now().UTC()
	recordEngine(t, root, store.Engine{
		ID: "engine:4242:aa", Host: "buildbox-2", Pid: 4242, Version: "v-test", Repo: "/srv/repo",
		Slots: 2, StartedAt: now.Add(-time.Hour), HeartbeatAt: now.Add(-2 * time.Minute),
	})
	state := func() string { return onlyEngineState(t, root) }
	require.Equal(t, "gone", state(), "a 2-minute-old heartbeat under the default ttl of 30s")

	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"),
		[]byte("[fleet]\nheartbeat = \"1m\"\nttl = \"10m\"\n"), 0o644))
	require.Equal(t, "running", state(), "a 2-minute-old heartbeat under [fleet] ttl = 10m")
	code, stdout, stderr := cli(t, "engines", "-C", root)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "running")
	require.Contains(t, stdout, "buildbox-2")
}

// An engine that stopped with --keep-agents is shown as kept while its
// agents wait for its clone's next engine (a TTL after the stop), then as
// stopped.
func TestEnginesShowsAKeptStop(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	now := time.Now().UTC()
	kept := store.Engine{ID: "engine:4343:bb", Host: "buildbox-3", Pid: 4343, Version: "v-test", Repo: "/srv/repo",
		Slots: 2, StartedAt: now.Add(-time.Hour), HeartbeatAt: now, StoppedAt: now, Kept: true}
	recordEngine(t, root, kept)
	require.Equal(t, "kept", onlyEngineState(t, root), "stopped a moment ago keeping its agents")
	kept.HeartbeatAt, kept.StoppedAt = now.Add(-2*time.Minute), now.Add(-2*time.Minute)
	recordEngine(t, root, kept)
	require.Equal(t, "stopped", onlyEngineState(t, root), "kept past the default ttl of 30s")
}

// An engine of this machine whose process is gone (kill -9: no word, its
// heartbeat still young) is shown as gone at once.
func TestEnginesJudgesThisHostsEngineByItsProcess(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	dead := exec.Command("true")
	require.NoError(t, dead.Run())
	pid := dead.ProcessState.Pid()
	now := time.Now().UTC()
	recordEngine(t, root, store.Engine{
		ID: fmt.Sprintf("engine:%d:1:aa", pid), Host: coord.HostName(""), Pid: pid, Version: "v-test", Repo: root,
		Slots: 2, StartedAt: now.Add(-time.Minute), HeartbeatAt: now,
	})
	require.Equal(t, "gone", onlyEngineState(t, root), "a fresh heartbeat from a process that is gone")
}

// recordEngine writes e's heartbeat into root's store.
func recordEngine(t *testing.T, root string, e store.Engine) {
	t.Helper()
	cfg, err := config.Load(root)
	require.NoError(t, err)
	st, _, err := coord.OpenStore(context.Background(), root, cfg)
	require.NoError(t, err)
	require.NoError(t, st.EngineHeartbeat(context.Background(), e))
	require.NoError(t, st.Close())
}

// onlyEngineState is the state `engines --json` gives the one engine
// root's store has heard from.
func onlyEngineState(t *testing.T, root string) string {
	t.Helper()
	code, stdout, stderr := cli(t, "engines", "-C", root, "--json")
	require.Equal(t, 0, code, stderr)
	var rows []struct{ State string }
	require.NoError(t, json.Unmarshal([]byte(stdout), &rows), stdout)
	require.Len(t, rows, 1)
	return rows[0].State
}

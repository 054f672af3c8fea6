package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// ledgerEvents reads the repository's whole ledger.
func ledgerEvents(t *testing.T, root string) []task.Event {
	t.Helper()
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(t, err)
	defer st.Close()
	evs, err := st.EventList(context.Background(), store.EventListParams{})
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	return evs
}

// lastSeq is the ledger's newest sequence number.
func lastSeq(t *testing.T, root string) int64 {
	evs := ledgerEvents(t, root)
	return evs[len(evs)-1].Seq
}

type jsonEvent struct {
	Type string    `json:"type"`
	Seq  int64     `json:"seq"`
	ID   string    `json:"id"`
	Task task.ID   `json:"task"`
	Kind task.Kind `json:"kind"`
	Text string    `json:"text"`
}

// events --follow --json prints the running engine's events with their
// real ids and sequence numbers, from after --since, and ends after the
// event that brings a task into the --until state. Without --follow it
// prints the ledger; with no engine, --follow says how to start one.
func TestEventsFollowPrintsTheRunningEnginesEvents(t *testing.T) {
	t.Parallel()
	root := calcRepo(t)
	// No slot runs the scripted harness: the task stays queued, and no
	// agent starts in this test.
	require.NoError(t, os.WriteFile(filepath.Join(root, "orchestra.toml"), []byte("[[slots]]\nname = \"only-shell\"\nharness = \"shell\"\ncapacity = 1\n"), 0o644))

	code, _, stderr := cli(t, "events", "--follow", "-C", root)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "no engine runs here to follow")

	e, err := engine.Start(context.Background(), engine.Params{Dir: root, Version: "test"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = e.Stop() })
	code, stdout, stderr := cli(t, "add", "-C", root, "--title", "Followed", "--goal", "g", "--verify", "true", "--pipeline", "implement")
	require.Equal(t, 0, code, stderr)
	id := task.ID(strings.TrimSpace(stdout))
	require.Positive(t, lastSeq(t, root))

	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		c := run([]string{"events", "--follow", "--json", "--since", "0", "--until", "parked", "-C", root}, nil, &out, &errb)
		done <- result{c, out.String(), errb.String()}
	}()
	// A second follower from --since: whether it attaches before or after
	// the park, the park reaches it (replayed from the ledger, or live).
	since2 := make(chan result, 1)
	go func() {
		var out, errb bytes.Buffer
		c := run([]string{"events", "--follow", "--json", "--since", "1", "--until", "parked", "-C", root}, nil, &out, &errb)
		since2 <- result{c, out.String(), errb.String()}
	}()
	code, _, stderr = cli(t, "park", "-C", root, string(id))
	require.Equal(t, 0, code, stderr)

	var got result
	select {
	case got = <-since2:
	case <-time.After(60 * time.Second):
		t.Fatal("events --follow --since 1 --until parked did not end after the park")
	}
	require.Equal(t, 0, got.code, got.stderr)
	var evs []jsonEvent
	for _, l := range strings.Split(strings.TrimSpace(got.stdout), "\n") {
		var ev jsonEvent
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		evs = append(evs, ev)
	}
	require.Greater(t, len(evs), 1, got.stdout)
	require.Greater(t, evs[0].Seq, int64(1), "only the events after --since")
	last := evs[len(evs)-1]
	require.Equal(t, task.EvTaskParked, last.Kind, "it ends on the event that parked the task")
	require.Equal(t, id, last.Task, "with the task's real id")

	// The first follower (no replay) ends on the same event, if it
	// attached before the park; if it came after, a park again ends it.
	select {
	case got = <-done:
	case <-time.After(2 * time.Second):
		code, _, stderr = cli(t, "unpark", "-C", root, string(id))
		require.Equal(t, 0, code, stderr)
		code, _, stderr = cli(t, "park", "-C", root, string(id))
		require.Equal(t, 0, code, stderr)
		select {
		case got = <-done:
		case <-time.After(60 * time.Second):
			t.Fatal("events --follow --until parked did not end after a park")
		}
	}
	require.Equal(t, 0, got.code, got.stderr)
	require.Contains(t, got.stdout, `"kind":"task.parked"`)
	require.Contains(t, got.stdout, `"task":"`+string(id)+`"`)
	// This follower replayed nothing: every line is a live event, and each
	// carries the seq the ledger gave it, so `--since` can resume from the
	// last one printed.
	ledger := map[string]int64{}
	for _, e := range ledgerEvents(t, root) {
		ledger[e.ID] = e.Seq
	}
	var prev int64
	for _, l := range strings.Split(strings.TrimSpace(got.stdout), "\n") {
		var ev jsonEvent
		require.NoError(t, json.Unmarshal([]byte(l), &ev), l)
		require.Positive(t, ev.Seq, "a live event carries its ledger seq: %s", l)
		require.Greater(t, ev.Seq, prev, "in ledger order")
		require.NotEmpty(t, ev.ID, l)
		require.Equal(t, ledger[ev.ID], ev.Seq, "the event's id and seq are the ledger's own: %s", l)
		prev = ev.Seq
	}

	code, stdout, stderr = cli(t, "events", "-C", root, "--since", "0")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, string(id)+" task.added")
	require.Contains(t, stdout, string(id)+" task.parked")

	code, _, stderr = cli(t, "events", "--follow", "--until", "nowhere", "-C", root)
	require.Equal(t, 2, code)
	require.Contains(t, stderr, `--until: "nowhere" is no state`)
}

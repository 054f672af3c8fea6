package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
)

// enginesCmd lists the engines the store has heard from: host, version,
// slots in use and last heartbeat. On a shared PostgreSQL store that is
// every machine's engine.
func enginesCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("engines", "orchestra-tui engines [--json] [-C DIR]", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	cfg, err := config.Load(r.Root)
	if err != nil {
		return fail(stderr, err)
	}
	// An engine is shown as gone at the age at which the other engines
	// take its leases: [fleet] ttl, as the coordinator reads it.
	ttl := cfg.Fleet.TTL.Duration
	if ttl <= 0 {
		ttl = coord.EngineTTL
	}
	ctx := context.Background()
	warnStopped(r.Root, stderr)
	st, err := openExisting(ctx, r, cfg)
	var none *noStoreError
	if errors.As(err, &none) {
		if *asJSON {
			fmt.Fprintln(stdout, "[]")
			return 0
		}
		fmt.Fprintf(stdout, "no engines: %v\n", err)
		return 0
	}
	if err != nil && !networkStore(cfg) {
		return fail(stderr, err)
	}
	var es []store.Engine
	if err == nil {
		defer st.Close()
		es, err = st.EngineList(ctx)
	}
	if err != nil {
		if !networkStore(cfg) {
			return fail(stderr, err)
		}
		// A database that does not answer is an outage to weather, not
		// this command's failure: say it as the engines say it, with
		// what this machine's engine has seen of it.
		fmt.Fprintln(stdout, coord.StoreOutageText(err), coord.StoreOutageAdvice)
		if seen := localStoreFault(r.Root); seen != "" {
			fmt.Fprintln(stdout, "This machine's engine: "+seen)
		}
		return 1
	}
	now, host := time.Now(), coord.HostName(cfg.Fleet.Host)
	if *asJSON {
		type row struct {
			store.Engine
			State string `json:"state"`
		}
		rows := []row{}
		for _, e := range es {
			rows = append(rows, row{e, engineState(e, host, now, ttl)})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rows); err != nil {
			return fail(stderr, err)
		}
		return 0
	}
	if len(es) == 0 {
		fmt.Fprintln(stdout, "no engine has run on this store yet: `orchestra-tui` or `orchestra-tui engine` starts one")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HOST\tPID\tVERSION\tSLOTS\tHEARTBEAT\tSTATE\tREPOSITORY")
	for _, e := range es {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d/%d\t%s ago\t%s\t%s\n", headless.Printable(e.Host), e.Pid,
			headless.Printable(e.Version), e.Busy, e.Slots, age(e.HeartbeatAge(now)), engineState(e, host, now, ttl),
			headless.Printable(e.Repo))
	}
	tw.Flush()
	if seen := localStoreFault(r.Root); seen != "" {
		// This machine's engine alone cannot reach the store (a
		// partition): its row above ages while it lasts.
		fmt.Fprintln(stdout, "This machine's engine: "+seen)
	}
	return 0
}

// networkStore reports whether the repository's store is PostgreSQL.
func networkStore(cfg config.Config) bool { return cfg.Store.URL != "" || coord.StoreURLSet() }

// localStoreFault asks this machine's engine, if one answers within a
// second, what it says of the store: its outage or step-down sentence, ""
// when all is well or no engine answers.
func localStoreFault(root string) string {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	cl, err := engine.Dial(ctx, engine.PathsFor(root).Socket, engine.Options{Watch: true, Kind: "cli", Version: version()})
	if err != nil {
		return ""
	}
	defer cl.Close()
	s := cl.Snapshot()
	return strings.TrimSpace(s.StoreFault + " " + s.SteppedDown)
}

// engineState is "running", "stopped" (it said so), "kept" (it stopped
// leaving its agents for its machine's next engine, which may still take
// them up: for a TTL after the stop) or "gone" (it ended without a word: on
// this host its process is gone; on another its heartbeat is older than
// ttl, its machine taken as lost).
func engineState(e store.Engine, host string, now time.Time, ttl time.Duration) string {
	switch {
	case !e.StoppedAt.IsZero() && e.Kept && e.HeartbeatAge(now) <= ttl:
		return "kept"
	case !e.StoppedAt.IsZero():
		return "stopped"
	case !coord.EngineLive(e, host, now, ttl):
		return "gone"
	default:
		return "running"
	}
}

// age renders a duration the way a person reads a clock: 4s, 3m, 2h, 5d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d.Seconds())) + "s"
	case d < time.Hour:
		return strconv.Itoa(int(d.Minutes())) + "m"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d.Hours())) + "h"
	default:
		return strconv.Itoa(int(d.Hours()/24)) + "d"
	}
}

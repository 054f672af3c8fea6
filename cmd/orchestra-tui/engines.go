package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
)

// staleAfter is how old a heartbeat may be before its engine is shown as
// gone: the age at which other engines take its leases.
const staleAfter = coord.EngineTTL

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
	ctx := context.Background()
	st, err := openStore(ctx, r)
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	es, err := st.EngineList(ctx)
	if err != nil {
		return fail(stderr, err)
	}
	now := time.Now()
	if *asJSON {
		type row struct {
			store.Engine
			State string `json:"state"`
		}
		rows := []row{}
		for _, e := range es {
			rows = append(rows, row{e, engineState(e, now)})
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
			headless.Printable(e.Version), e.Busy, e.Slots, age(now.Sub(e.HeartbeatAt)), engineState(e, now),
			headless.Printable(e.Repo))
	}
	tw.Flush()
	return 0
}

// engineState is "running", "stopped" (it said so) or "gone" (its
// heartbeat stopped without a word: killed, or its machine lost).
func engineState(e store.Engine, now time.Time) string {
	switch {
	case !e.StoppedAt.IsZero():
		return "stopped"
	case now.Sub(e.HeartbeatAt) > staleAfter:
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

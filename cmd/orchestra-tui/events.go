package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
)

// eventsCmd prints the ledger's events; with --follow, the events of the
// running engine as they happen, through the engine protocol (so over
// --remote too), until --until or an interrupt.
func eventsCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("events", "orchestra-tui events [--follow] [--json] [--since SEQ] [--until STATE] [--remote HOST[:REPO]] [-C DIR]", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	follow := fs.Bool("follow", false, "print the running engine's events as they happen, until --until or ctrl+c")
	jsonOut := fs.Bool("json", false, "print one JSON object per event, as run --headless --json does")
	since := fs.Int64("since", 0, "only the events after ledger sequence number `SEQ` (the \"seq\" of --json); with --follow they come first")
	untilArg := fs.String("until", "", "with --follow, end after the event that brings a task into `STATE` (awaiting-review, failed, …), or once every task is at rest (\"rest\")")
	remote := fs.String("remote", "", "follow the engine of another machine, over ssh: `HOST[:REPO]`")
	remoteBin := fs.String("remote-bin", "orchestra-tui", "the orchestra-tui `PROGRAM` to run on the remote machine")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "events", "unexpected argument %q", fs.Arg(0))
	}
	var until headless.Until
	if *untilArg != "" {
		if !*follow {
			return usageError(stderr, "events", "--until needs --follow")
		}
		u, err := headless.ParseUntil(*untilArg)
		if err != nil {
			return usageError(stderr, "events", "%v", err)
		}
		until = u
	}
	if *remote != "" && !*follow {
		return usageError(stderr, "events", "--remote needs --follow")
	}
	format := headless.Real
	if *jsonOut {
		format = headless.JSON
	}
	p := headless.New(stdout, format)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if !*follow {
		return printLedger(ctx, *dir, *since, p, stderr)
	}
	cl, err := dialEvents(ctx, *dir, *remote, *remoteBin, *since)
	if err != nil {
		return fail(stderr, err)
	}
	defer cl.Close()
	if err := headless.Follow(ctx, cl, cl.Done(), stdout, headless.Options{Printer: p}, until); err != nil {
		if errors.Is(err, headless.ErrEngineGone) && cl.Stopping() {
			err = errors.New("the engine stopped")
		}
		return fail(stderr, err)
	}
	return 0
}

// dialEvents connects to the engine to follow, replaying the ledger after
// since first.
func dialEvents(ctx context.Context, dir, remote, remoteBin string, since int64) (*engine.Client, error) {
	o := engine.Options{Watch: true, After: since, Version: version(), Kind: "events"}
	if remote != "" {
		host, rdir := remoteTarget(remote)
		conn, err := engine.DialSSH(host, rdir, remoteBin)
		if err != nil {
			return nil, fmt.Errorf("--remote %q: %w", remote, err)
		}
		cl, err := engine.NewClient(ctx, conn, o)
		if err != nil {
			return nil, conn.Explain(fmt.Errorf("follow the engine on %s: %w", remote, err))
		}
		return cl, nil
	}
	r, err := repo.Open(dir)
	if err != nil {
		return nil, err
	}
	cl, err := dialSettled(ctx, engine.PathsFor(r.Root), o)
	if err != nil && isNotServing(err) {
		return nil, errors.New("no engine runs here to follow: `orchestra-tui` or `orchestra-tui engine` starts one (`events` without --follow prints the ledger)")
	}
	return cl, err
}

// printLedger prints the store's events after since.
func printLedger(ctx context.Context, dir string, since int64, p *headless.Printer, stderr io.Writer) int {
	r, err := repo.Open(dir)
	if err != nil {
		return fail(stderr, err)
	}
	st, err := openStore(ctx, r)
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	evs, err := st.EventList(ctx, store.EventListParams{AfterSeq: since})
	if err != nil {
		return fail(stderr, err)
	}
	for _, ev := range evs {
		p.Print(ev)
	}
	return 0
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/orchestra-tui/orchestra-tui/headless"
	"github.com/orchestra-tui/orchestra-tui/repo"
)

// statusCmd lists tasks with state, phase and verdict, read from the store.
func statusCmd(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("status", "orchestra-tui status [--json] [-C DIR]", stderr)
	dir := fs.String("C", ".", "run as if started in `DIR`")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	st, err := openStore(context.Background(), r)
	if err != nil {
		return fail(stderr, err)
	}
	defer st.Close()
	ctx := context.Background()
	// One query, whatever the ledger's length: the tasks with their
	// latest verdicts.
	ts, err := st.TaskSummaries(ctx)
	if err != nil {
		return fail(stderr, err)
	}
	type row struct {
		ID      string `json:"id"`
		Title   string `json:"title"`
		State   string `json:"state"`
		Phase   string `json:"phase"`
		Attempt int    `json:"attempt"`
		Verdict string `json:"verdict"`
		Reason  string `json:"reason,omitempty"`
	}
	var rows []row
	for _, s := range ts {
		t := s.Task
		v := "·"
		if s.Verdict != nil {
			v = s.Verdict.Line()
		}
		rows = append(rows, row{string(t.ID), t.Title, string(t.State), string(t.Phase), t.Attempt, v, t.Reason})
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if rows == nil {
			rows = []row{}
		}
		if err := enc.Encode(rows); err != nil {
			return fail(stderr, err)
		}
		return 0
	}
	if len(rows) == 0 {
		fmt.Fprintln(stdout, "no tasks: add one with `orchestra-tui add`")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTITLE\tSTATE\tPHASE\tATTEMPT\tVERDICT")
	for _, r := range rows {
		// Titles and verdicts hold text the operator did not type here
		// (a task file, an agent's output): never raw to the terminal.
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, headless.Printable(r.Title), r.State, headless.Printable(r.Phase), r.Attempt, headless.Printable(r.Verdict))
	}
	tw.Flush()
	return 0
}

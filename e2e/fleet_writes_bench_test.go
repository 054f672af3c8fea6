package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// BenchmarkFleetWritesPerSession counts, with pg_stat_statements, the
// statements an engine on PostgreSQL runs while its sessions work: a real
// engine runs writesSessions sessions of a program that draws a line every
// half second (so every lease renewal finds progress), and each iteration
// is one minute of wall time. Heartbeats keep their default interval
// (10s); the lease is shortened to length 20s and window 5s, so a
// renewal is due every 15s instead of every 15 minutes (length 20m,
// window 5m): the renewal figures scale by 1/60 to the defaults.
//
//	go test -run '^$' -bench FleetWritesPerSession -benchtime 2x ./e2e
func BenchmarkFleetWritesPerSession(b *testing.B) {
	const writesSessions = 4
	cluster := pgtest.Start(b, pgtest.Statements())
	f := newFleetOn(b, cluster.NewDatabase(b), []string{"machine-a"}, writesSessions, agent.Script{})
	// The program is a shell loop that draws, with the brief as its
	// ignored $0; with no ready marker it is confirmed once it runs.
	conf := fmt.Sprintf(`[harness.ticker]
argv = ["sh", "-c", "while :; do date +%%s.%%N; sleep 0.5; done"]
delivery = "arg"

[lease]
length = "20s"
window = "5s"
tick = "1s"
max_renewals = 1000

[[slots]]
name = "fleet"
harness = "ticker"
capacity = %d

[fleet]
host = "machine-a"
`, writesSessions)
	require.NoError(b, os.WriteFile(filepath.Join(f.engines["machine-a"].dir, "orchestra.toml"), []byte(conf), 0o600))
	f.start(b, "machine-a")
	var ids []task.ID
	for i := range writesSessions {
		cmd := exec.Command(f.bin, "add", "-C", f.engines["machine-a"].dir, "--title", fmt.Sprintf("ticker %d", i+1),
			"--goal", project.Goal, "--verify", project.VerifyCommand, "--pipeline", "implement", "--harness", "ticker")
		cmd.Env = f.env()
		out, err := cmd.Output()
		require.NoError(b, err, "add: %s", out)
		fields := strings.Fields(string(out))
		require.NotEmpty(b, fields)
		ids = append(ids, task.ID(fields[len(fields)-1]))
	}
	ctx := context.Background()
	live := func() map[task.ID]string {
		out := map[task.ID]string{}
		for _, id := range ids {
			ss, err := f.st.SessionList(ctx, id)
			require.NoError(b, err)
			for _, s := range ss {
				if s.Status == store.SessionConfirmed {
					out[id] = s.ID
				}
			}
		}
		return out
	}
	f.waitStore(b, 5*time.Minute, "every session confirmed", func() bool { return len(live()) == writesSessions })
	before := live()
	seq, err := f.st.EventLastSeq(ctx)
	require.NoError(b, err)

	cluster.ResetStatements(b)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		<-time.After(time.Minute)
	}
	elapsed := time.Since(start)
	b.StopTimer()
	stmts := cluster.Statements(b)
	require.Equal(b, before, live(), "the same sessions ran through the whole measurement")

	var heartbeats, leases, events, rows, txns, notifies int64
	for _, s := range stmts {
		q := strings.TrimSpace(s.Query)
		switch {
		case strings.HasPrefix(q, "INSERT INTO engines"):
			heartbeats += s.Calls
		case strings.Contains(q, "INSERT INTO leases"), strings.HasPrefix(q, "UPDATE leases"):
			leases += s.Calls
		case strings.HasPrefix(q, "INSERT INTO events"):
			events += s.Calls
		case strings.HasPrefix(q, "SELECT pg_advisory_xact_lock"):
			txns += s.Calls
		case strings.HasPrefix(q, "SELECT pg_notify"):
			notifies += s.Calls
		}
		if strings.HasPrefix(q, "INSERT") || strings.HasPrefix(q, "UPDATE") || strings.HasPrefix(q, "DELETE") {
			rows += s.Calls
		}
	}
	evs, err := f.st.EventList(ctx, store.EventListParams{AfterSeq: seq})
	require.NoError(b, err)
	renewals := 0
	for _, ev := range evs {
		if ev.Kind == task.EvLeaseRenewed {
			renewals++
		}
	}
	perMin := func(n int64) float64 { return float64(n) / writesSessions / elapsed.Minutes() }
	b.ReportMetric(perMin(txns), "write-txns/session/min")
	b.ReportMetric(perMin(rows), "row-stmts/session/min")
	b.ReportMetric(perMin(heartbeats), "heartbeats/session/min")
	b.ReportMetric(perMin(int64(renewals)), "renewals/session/min")
	b.ReportMetric(perMin(leases), "lease-writes/session/min")
	b.Logf("%d sessions, %s: %d write transactions (%d NOTIFY), %d row statements: %d heartbeats, %d lease upserts (%d renewals in the ledger), %d events",
		writesSessions, elapsed.Round(time.Second), txns, notifies, rows, heartbeats, leases, renewals, events)
	for _, s := range stmts {
		q := strings.Join(strings.Fields(s.Query), " ")
		if strings.HasPrefix(q, "INSERT") || strings.HasPrefix(q, "UPDATE") || strings.HasPrefix(q, "DELETE") || strings.HasPrefix(q, "SELECT pg_") {
			b.Logf("%6d  %.100s", s.Calls, q)
		}
	}
}

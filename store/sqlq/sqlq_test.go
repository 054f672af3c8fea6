package sqlq

import (
	"strings"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/task"
)

func TestBind(t *testing.T) {
	q := "SELECT a FROM t WHERE b = ? AND c IN (?, ?)"
	if got := SQLite.Bind(q); got != q {
		t.Fatalf("SQLite bound %q", got)
	}
	if got, want := Postgres.Bind(q), "SELECT a FROM t WHERE b = $1 AND c IN ($2, $3)"; got != want {
		t.Fatalf("Postgres bound %q, want %q", got, want)
	}
	// Every ? of a shared statement is a placeholder: as many as it binds.
	if n := strings.Count(upsertUsage, "?"); n != 10 {
		t.Fatalf("upsertUsage holds %d ?, binds 10", n)
	}
}

// A time column reads back the same from either dialect: SQLite's text
// ("" for none), PostgreSQL's timestamptz (NULL for none).
func TestAtScansBothDialects(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 45, 52, 123456789, time.FixedZone("x", 3600))
	for _, src := range []any{TimeText(at), []byte(TimeText(at)), at} {
		var got time.Time
		if err := At(&got).Scan(src); err != nil {
			t.Fatalf("scan %T: %v", src, err)
		}
		if !got.Equal(at) || got.Location() != time.UTC {
			t.Fatalf("scan %T: %v, want %v in UTC", src, got, at)
		}
	}
	for _, src := range []any{nil, "", TimeText(time.Time{})} {
		got := at
		if err := At(&got).Scan(src); err != nil || !got.IsZero() {
			t.Fatalf("scan %#v: %v, %v; want the zero time", src, got, err)
		}
	}
	var got time.Time
	if err := At(&got).Scan("yesterday"); err == nil {
		t.Fatal("scanned text that is no stored time")
	}
}

func TestDialectBindsTimesAndLists(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.FixedZone("x", 3600))
	if got := SQLite.Time(at); got != "2026-12-03T09:00:00.000000000Z" {
		t.Fatalf("SQLite time %v", got)
	}
	if got := Postgres.Time(at).(time.Time); !got.Equal(at) || got.Location() != time.UTC {
		t.Fatalf("Postgres time %v", got)
	}
	if got := SQLite.OptTime(time.Time{}); got != "" {
		t.Fatalf("SQLite no time %#v", got)
	}
	if got := Postgres.OptTime(time.Time{}); got != nil {
		t.Fatalf("Postgres no time %#v", got)
	}
	cond, args := SQLite.In("state", []string{"queued", "leased"})
	if cond != "state IN (?, ?)" || len(args) != 2 || args[1] != "leased" {
		t.Fatalf("SQLite In %q %v", cond, args)
	}
	cond, args = Postgres.In("state", []string{"queued", "leased"})
	if Postgres.Bind(cond) != "state = ANY($1)" || len(args) != 1 {
		t.Fatalf("Postgres In %q %v", cond, args)
	}
	// The cached binding is the binding.
	q := "SELECT 1 WHERE a = ? AND b = ?"
	first, again := Postgres.Bind(q), Postgres.Bind(q)
	if first != again || first != "SELECT 1 WHERE a = $1 AND b = $2" {
		t.Fatalf("Bind %q then %q", first, again)
	}
}

// A claim reads the candidates in one statement on PostgreSQL, skipping
// rows another writer holds, and one candidate at a time on SQLite.
func TestFirstQueuedTriesByDialect(t *testing.T) {
	ids := []task.ID{"b", "a", "c"}
	q, tries := SQLite.firstQueued(ids)
	if len(tries) != 3 || tries[1][0] != "a" || tries[1][1] != string(task.StateQueued) || strings.Count(q, "?") != 2 {
		t.Fatalf("SQLite tries %v of %q", tries, q)
	}
	if strings.Contains(q, "FOR UPDATE") {
		t.Fatalf("SQLite query locks rows: %q", q)
	}
	q, tries = Postgres.firstQueued(ids)
	if len(tries) != 1 || len(tries[0]) != 2 {
		t.Fatalf("Postgres tries %v", tries)
	}
	if got, ok := tries[0][0].([]string); !ok || strings.Join(got, ",") != "b,a,c" {
		t.Fatalf("Postgres binds the candidates as %#v, want them in order", tries[0][0])
	}
	b := Postgres.Bind(q)
	if !strings.Contains(b, "unnest($1::text[])") || !strings.Contains(b, "tasks.state = $2") ||
		!strings.HasSuffix(b, "FOR UPDATE OF tasks SKIP LOCKED") || strings.Contains(b, "?") {
		t.Fatalf("Postgres claim query %q", b)
	}
	if SQLite.forUpdate() != "" || Postgres.forUpdate() != " FOR UPDATE" {
		t.Fatalf("forUpdate %q, %q", SQLite.forUpdate(), Postgres.forUpdate())
	}
}

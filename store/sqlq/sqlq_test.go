package sqlq

import (
	"strings"
	"testing"
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

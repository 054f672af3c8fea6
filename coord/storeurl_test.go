package coord

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A store on another machine needs an sslmode said out loud; one on this
// machine (socket, localhost, loopback) does not.
func TestCheckTLS(t *testing.T) {
	t.Setenv("PGSSLMODE", "")
	for raw, ok := range map[string]bool{
		"postgres://u:p@db.example.com/orchestra":                   false,
		"postgres://u:p@10.0.0.5:5432/orchestra":                    false,
		"postgres://u@db.example.com/orchestra?sslmode=verify-full": true,
		"postgres://u@db.example.com/orchestra?sslmode=disable":     true,
		"postgres://u:p@localhost/orchestra":                        true,
		"postgres://u:p@127.0.0.1:5432/orchestra":                   true,
		"postgres://u:p@[::1]:5432/orchestra":                       true,
		"postgres:///orchestra?host=/run/postgresql":                true,
		"postgres://u@/orchestra?host=db.example.com":               false,
		"postgres://u@localhost,db.example.com/orchestra":           false,
	} {
		err := checkTLS(raw)
		if ok {
			require.NoError(t, err, raw)
		} else {
			require.ErrorContains(t, err, "sslmode", raw)
		}
	}
	t.Setenv("PGSSLMODE", "require")
	require.NoError(t, checkTLS("postgres://u:p@db.example.com/orchestra"))
}

// Only a URL that carries a password is hidden by a restart.
func TestHasPassword(t *testing.T) {
	require.True(t, hasPassword("postgres://u:secret@h/db"))
	require.True(t, hasPassword("postgres://u@h/db?password=secret"))
	require.False(t, hasPassword("postgres://u@h/db"))
	require.False(t, hasPassword("postgres:///db?host=/tmp"))
}

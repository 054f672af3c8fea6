package postgres

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/postgres/pgtest"
	"github.com/orchestra-tui/orchestra-tui/store/storetest"
)

func TestConformance(t *testing.T) {
	t.Parallel()
	c := pgtest.Start(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		st, err := Open(context.Background(), c.NewDatabase(t))
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, st.Close()) })
		return st
	})
}

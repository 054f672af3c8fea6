package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
)

var cursorCases = []testCase{
	{"CursorRoundTripNeverMovesBack", testCursor},
}

// testCursor: a cursor not recorded is not found; one recorded reads back
// as written, per source and list; a later write moves Since forward, an
// earlier one leaves it (two engines reading one list), and a Ref of 0
// keeps the recorded one.
func testCursor(t *testing.T, b *bundle) {
	const src = "gitea https://git.example.org team/app"
	_, err := b.st.CursorGet(b.ctx, src, "issue 12 comments")
	require.ErrorIs(t, err, store.ErrNotFound)

	c := store.Cursor{Source: src, What: "issue 12 comments", Since: b.at(time.Minute), Ref: 41}
	require.NoError(t, b.st.CursorPut(b.ctx, c))
	got, err := b.st.CursorGet(b.ctx, src, c.What)
	require.NoError(t, err)
	require.Equal(t, c, got)

	// Another list and another source are rows of their own.
	pull := store.Cursor{Source: src, What: "pull 13 review comments"}
	require.NoError(t, b.st.CursorPut(b.ctx, pull))
	got, err = b.st.CursorGet(b.ctx, src, pull.What)
	require.NoError(t, err)
	require.Equal(t, pull, got, "the zero time reads back as the zero time")
	_, err = b.st.CursorGet(b.ctx, "github team/app", c.What)
	require.ErrorIs(t, err, store.ErrNotFound)

	// Forward, with the ref kept.
	require.NoError(t, b.st.CursorPut(b.ctx, store.Cursor{Source: src, What: c.What, Since: b.at(2 * time.Minute)}))
	got, err = b.st.CursorGet(b.ctx, src, c.What)
	require.NoError(t, err)
	require.Equal(t, store.Cursor{Source: src, What: c.What, Since: b.at(2 * time.Minute), Ref: 41}, got)

	// Back: Since stays, a new ref is taken.
	require.NoError(t, b.st.CursorPut(b.ctx, store.Cursor{Source: src, What: c.What, Since: b.at(time.Second), Ref: 42}))
	got, err = b.st.CursorGet(b.ctx, src, c.What)
	require.NoError(t, err)
	require.Equal(t, store.Cursor{Source: src, What: c.What, Since: b.at(2 * time.Minute), Ref: 42}, got)
}

package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

// write feeds the emulator and tells the client, as a host's fanout does.
func write(t *testing.T, term *session.Terminal, lb *Loopback, s string) {
	t.Helper()
	_, err := term.Write([]byte(s))
	require.NoError(t, err)
	require.NoError(t, lb.Changed())
}

func TestRowsReachTheEngineAsTheEmulatorWroteThemAndOnlyWhenChanged(t *testing.T) {
	t.Parallel()
	for _, mode := range []LoopbackMode{LoopbackPush, LoopbackAsk, LoopbackWhole} {
		old := mode == LoopbackWhole
		t.Run(fmt.Sprintf("host mode %d", mode), func(t *testing.T) {
			t.Parallel()
			term := session.NewTerminal(40, 20, 0, nil)
			lb, err := NewLoopback(term, mode)
			require.NoError(t, err)
			require.Equal(t, mode == LoopbackPush, lb.Pushing(), "rows are pushed only by a host that offers it")
			defer lb.Close()
			v := lb.View()
			rw := v.(session.RowWriter)
			write(t, term, lb, "\x1b[31mRED\x1b[m plain 変更\r\nsecond line\x1b[2;1H"+strings.Repeat("\x1b[B\rfilled row", 17))
			if !old {
				require.Equal(t, term.AppendRows(nil, 0, 20, 40), rw.AppendRows(nil, 0, 20, 40), "the rows are the emulator's own")
			}
			require.Equal(t, term.Text(), v.Text())
			require.Equal(t, session.RowsText(term.AppendRows(nil, 0, 20, 40)), session.RowsText(rw.AppendRows(nil, 0, 20, 40)))

			// One row changes: a host that offers rows sends that one.
			s0, r0 := lb.Bytes()
			write(t, term, lb, "\x1b[20;1Hstatus ⠋ working")
			got := rw.AppendRows(nil, 0, 20, 40)
			s1, r1 := lb.Bytes()
			if mode == LoopbackPush {
				require.Equal(t, r0, r1, "pushed rows: the engine asks nothing")
			} else {
				require.Greater(t, r1, r0, "the engine asks after the notice")
			}
			require.Contains(t, got[19], "status ⠋ working")
			require.Equal(t, strings.TrimRight(strings.Split(term.Text(), "\n")[19], " "), strings.TrimRight(session.RowsText(got[19:20]), " "))
			if old {
				require.Greater(t, s1-s0, int64(20*40), "an old host sends the whole screen")
			} else {
				require.Less(t, s1-s0, int64(400), "a host that offers rows sends only the changed one")
				require.Equal(t, term.AppendRows(nil, 0, 20, 40), got)
			}
			// Unchanged: nothing is asked.
			s2, _ := lb.Bytes()
			_ = rw.AppendRows(nil, 0, 20, 40)
			s3, _ := lb.Bytes()
			require.Equal(t, s2, s3)
			// A narrower pane gets the rows cut.
			cut := rw.AppendRows(nil, 0, 20, 10)
			require.Len(t, cut, 20)
			require.Equal(t, "RED plain", session.RowsText(cut[:1]))
			// A scroll: pushed rows move the rows held up and carry
			// the one that came in.
			s0, _ = lb.Bytes()
			write(t, term, lb, "\r\nscrolled in")
			got = rw.AppendRows(nil, 0, 20, 40)
			s1, _ = lb.Bytes()
			require.Equal(t, session.RowsText(term.AppendRows(nil, 0, 20, 40)), session.RowsText(got))
			if mode == LoopbackPush {
				require.Less(t, s1-s0, int64(400), "a scroll costs the row it brought in")
				require.Equal(t, term.AppendRows(nil, 0, 20, 40), got)
			}
		})
	}
}

func TestRowsAfterALostReplyAreSentWhole(t *testing.T) {
	t.Parallel()
	term := session.NewTerminal(20, 3, 0, nil)
	_, _ = term.Write([]byte("one\r\ntwo\r\nthree"))
	var rs rowSender
	r1 := rs.reply(term, rowsReq{})
	require.Len(t, r1.Lines, 3)
	_, _ = term.Write([]byte("\x1b[1;1HONE"))
	r2 := rs.reply(term, rowsReq{Have: r1.Seq})
	require.Equal(t, r1.Seq, r2.Base)
	require.Equal(t, []rowAt{{Y: 0, Line: term.AppendRows(nil, 0, 1, 20)[0]}}, r2.Set)
	// The client never applied r2 (its reply timed out): it names r1,
	// which is no longer the host's last, so every row comes.
	r3 := rs.reply(term, rowsReq{Have: r1.Seq})
	require.Zero(t, r3.Base)
	require.Equal(t, term.AppendRows(nil, 0, 3, 20), r3.Lines)
	held, ok := applyRows(r1.Lines, r3)
	require.True(t, ok)
	require.Equal(t, r3.Lines, held)
	// The text only when asked.
	b, err := json.Marshal(rs.reply(term, rowsReq{Have: r3.Seq}))
	require.NoError(t, err)
	require.NotContains(t, string(b), "ONE")
	r5 := rs.reply(term, rowsReq{Have: r3.Seq + 1, Text: true})
	require.True(t, r5.HasText)
	require.Equal(t, term.Text(), r5.Text)
}

// A reply to a request (an engine older than pushed rows asks) never
// carries a shift, which such an engine would not apply: a scroll is
// every row changed. Pushed rows carry it.
func TestOnlyPushedRowsCarryAShift(t *testing.T) {
	t.Parallel()
	term := session.NewTerminal(20, 4, 0, nil)
	_, _ = term.Write([]byte("one\r\ntwo\r\nthree\r\nfour"))
	var rs rowSender
	r1 := rs.reply(term, rowsReq{})
	_, _ = term.Write([]byte("\r\nfive"))
	r2 := rs.reply(term, rowsReq{Have: r1.Seq})
	require.Zero(t, r2.Shift)
	require.Len(t, r2.Set, 4)
	held, ok := applyRows(r1.Lines, r2)
	require.True(t, ok)
	require.Equal(t, term.AppendRows(nil, 0, 4, 20), held)

	var out bytes.Buffer
	c := wire.NewConn(&out)
	_, err := rs.push(c, term, false, false)
	require.NoError(t, err)
	_, _ = term.Write([]byte("\r\nsix"))
	_, err = rs.push(c, term, false, false)
	require.NoError(t, err)
	var pushes []rowsReply
	for {
		f, err := c.Recv()
		if err != nil {
			break
		}
		var r rowsReply
		require.NoError(t, wire.ReadBody(f.Body, &r))
		pushes = append(pushes, r)
	}
	require.Len(t, pushes, 2)
	require.Equal(t, 1, pushes[1].Shift)
	require.Len(t, pushes[1].Set, 1)
	held, ok = applyRows(held, pushes[0])
	require.True(t, ok)
	held, ok = applyRows(held, pushes[1])
	require.True(t, ok)
	require.Equal(t, term.AppendRows(nil, 0, 4, 20), held)
}

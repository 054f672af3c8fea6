package storetest

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

var baseCases = []testCase{
	{"BaseInsertGetListUpdate", testBases},
}

func (b *bundle) newBase(taskID task.ID, after time.Duration) store.Base {
	return store.Base{
		ID: b.id("conv"), TaskID: taskID, Harness: "claude", Model: "claude-stub-1",
		Fingerprint: `{"binary":"/bin/claude","argv":["claude","-p"]}`, FingerprintHash: "ab12",
		Training:  `{"models":{"claude-stub-1":{"tokens":{"input":3},"cost_usd":0.5,"priced":true}}}`,
		CreatedAt: b.at(after), LastHitAt: b.at(after), LastUsedAt: b.at(after),
	}
}

// testBases pins the base registry: faithful round trips, the task filter,
// oldest-first order, an update that touches only the clock fields, and
// events written with both writes.
func testBases(t *testing.T, b *bundle) {
	tk, other := b.insertTask(t), b.insertTask(t)
	b1, b2, b3 := b.newBase(tk.ID, time.Second), b.newBase(tk.ID, 2*time.Second), b.newBase(other.ID, 0)
	ev := b.event(tk.ID, task.EvUsage)
	require.NoError(t, b.st.BaseInsert(b.ctx, b2))
	require.NoError(t, b.st.BaseInsert(b.ctx, b1, ev))
	require.NoError(t, b.st.BaseInsert(b.ctx, b3))
	require.Error(t, b.st.BaseInsert(b.ctx, b1), "a conversation is one base")

	got, err := b.st.BaseGet(b.ctx, b1.ID)
	require.NoError(t, err)
	require.Equal(t, b1, got)
	list, err := b.st.BaseList(b.ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.Base{b1, b2}, list)
	all, err := b.st.BaseList(b.ctx, "")
	require.NoError(t, err)
	require.Equal(t, []store.Base{b3, b1, b2}, all)

	upd := b1
	upd.LastHitAt, upd.Forks, upd.RetiredAt, upd.LastUsedAt = b.at(time.Minute), 2, b.at(time.Hour), b.at(30*time.Second)
	upd.Model, upd.Training = "ignored", "ignored" // training is fixed once stored
	ev2 := b.event(tk.ID, task.EvUsage)
	require.NoError(t, b.st.BaseUpdate(b.ctx, upd, ev2))
	got, err = b.st.BaseGet(b.ctx, b1.ID)
	require.NoError(t, err)
	want := b1
	want.LastHitAt, want.Forks, want.RetiredAt, want.LastUsedAt = upd.LastHitAt, upd.Forks, upd.RetiredAt, upd.LastUsedAt
	require.Equal(t, want, got)
	b.requireEvents(t, tk.ID, ev, ev2)

	_, err = b.st.BaseGet(b.ctx, "missing")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.ErrorIs(t, b.st.BaseUpdate(b.ctx, b.newBase(tk.ID, 0)), store.ErrNotFound)
}

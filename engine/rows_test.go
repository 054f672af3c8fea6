package engine

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// fill sets every exported field v holds, recursively, to a value that
// differs with seed and is not its zero, with the characters the row
// format escapes in every string: a field added to a task's view shows up
// here without anyone listing it.
func fill(v reflect.Value, seed int) { fillDepth(v, seed, 0) }

func fillDepth(v reflect.Value, seed, depth int) {
	if depth > 4 { // Usage.Phases holds Usages
		return
	}
	fill := func(v reflect.Value, seed int) { fillDepth(v, seed, depth+1) }
	switch v.Kind() {
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d \\ tab\tnl\ncomma, bar| ✳ \\b", seed))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(seed*7 + 3))
	case reflect.Float64:
		v.SetFloat(float64(seed) + 0.1234)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		fill(s.Index(0), seed+1)
		fill(s.Index(1), seed+2)
		v.Set(s)
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, seed+1)
		fill(e, seed+2)
		m.SetMapIndex(k, e)
		v.Set(m)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(p.Elem(), seed+1)
		v.Set(p)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 1, 2, 3, 4, 5, 6+seed, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), seed+i)
			}
		}
	}
}

// jsonTrip is v carried as encoding/json carries it: what a console got
// before snapshots carried rows.
func jsonTrip[T any](t *testing.T, v T) T {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out T
	require.NoError(t, json.Unmarshal(b, &out))
	return out
}

// A snapshot reads back from its wire form as it read back from JSON:
// every field of a summary (filled through reflection, with tabs, newlines,
// commas and backslashes in every string), the live views whole and in
// their places.
func TestSnapshotRowsReadBackAsJSONDid(t *testing.T) {
	t.Parallel()
	var full coord.TaskView
	fill(reflect.ValueOf(&full).Elem(), 1)
	ended := full
	ended.SessionID, ended.Lease, ended.Gate = "", nil, false
	bare := coord.TaskView{Task: task.Task{ID: "01BARE", State: task.StateCompleted}}
	noVerdict := ended
	noVerdict.Verdict, noVerdict.Models = nil, nil
	gated := ended
	gated.Gate = true
	failed := ended
	failed.Verdict = &verify.Verdict{Status: verify.StatusError, Detail: "timed out,\tafter 5m"}
	s := coord.Snapshot{At: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Gen: 9, StoreFault: "store gone",
		Tasks: []coord.TaskView{full, ended, bare, gated, noVerdict, failed, full},
		Slots: []coord.SlotView{{Name: "a", Harness: "claude", Capacity: 2, Busy: 1}}}

	var want coord.Snapshot
	want = s
	want.Tasks = make([]coord.TaskView, len(s.Tasks))
	for i, tv := range s.Tasks {
		want.Tasks[i] = tv.Summary()
	}
	want = jsonTrip(t, want)

	w := toWire(s)
	require.Equal(t, []int{0, 3, 6}, w.Live, "the live views and the gated one travel whole")
	got, err := fromWire(jsonTrip(t, w))
	require.NoError(t, err)
	require.Equal(t, want, got)
	// The filled summary is not trivially equal: its strings survived.
	require.Contains(t, got.Tasks[1].Task.Title, "tab\tnl\ncomma, bar| ✳ \\b")
	require.NotNil(t, got.Tasks[1].Verdict)
	require.Nil(t, got.Tasks[4].Verdict)
}

// A damaged snapshot is an error, not a list of wrong tasks.
func TestSnapshotRowsRefuseDamage(t *testing.T) {
	t.Parallel()
	var ended coord.TaskView
	fill(reflect.ValueOf(&ended).Elem(), 1)
	ended.SessionID, ended.Lease, ended.Gate = "", nil, false
	w := toWire(coord.Snapshot{Tasks: []coord.TaskView{ended, ended}})
	fields := strings.Split(w.Rows[0], "|")
	fields[6] = "x" // the attempt
	for name, bad := range map[string]wireSnap{
		"a field cut":       {Rows: []string{w.Rows[0][:len(w.Rows[0])/2], w.Rows[1]}},
		"a field added":     {Rows: []string{"x|" + w.Rows[0], w.Rows[1]}},
		"a number garbled":  {Rows: []string{strings.Join(fields, "|"), w.Rows[1]}},
		"a live task short": {Rows: w.Rows, Live: []int{0}},
	} {
		_, err := fromWire(bad)
		require.Error(t, err, name)
	}
}

// BenchmarkSnapshotWire encodes and decodes a snapshot of 10,000 ended
// tasks (storegen's kind: a verdict, usage, a model each) as an attach
// carries it: "objects" is the JSON of TaskViews a console got before
// protocol 3, "rows" the wire form of now. Reported per snapshot, with the
// bytes on the wire:
//
//	go test -run '^$' -bench SnapshotWire ./engine/
func BenchmarkSnapshotWire(b *testing.B) {
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	s := coord.Snapshot{At: at, Gen: 3}
	for i := range 10000 {
		created := at.Add(time.Duration(i) * time.Minute)
		s.Tasks = append(s.Tasks, coord.TaskView{
			Task: task.Task{ID: task.ID(fmt.Sprintf("01KE6P4YM0EPMDTXFN%08d", i)), Title: fmt.Sprintf("task %05d: fix the flaky test in pkg%03d", i, i%500),
				Harness: "claude", Model: "claude-sonnet-4-5", State: task.StateCompleted, Phase: task.PhaseReview, Attempt: 1,
				CreatedAt: created, UpdatedAt: created.Add(40 * time.Minute)},
			Verdict: &verify.Verdict{Status: verify.StatusOK, Command: "go test ./...", Passed: 12, Counted: true, At: created.Add(37 * time.Minute)},
			Usage: coord.Usage{InputTokens: 24000, OutputTokens: 6800, CacheCreationTokens: 1600, CacheReadTokens: 180000,
				CostUSD: 0.1824, Models: []string{"claude-sonnet-4-5"}, LowerBound: "side requests | unrecorded, here"},
			Models: []string{"claude-sonnet-4-5"},
		})
	}
	b.Run("objects", func(b *testing.B) {
		var n int
		for b.Loop() {
			body, err := json.Marshal(summarized(s))
			require.NoError(b, err)
			var got coord.Snapshot
			require.NoError(b, json.Unmarshal(body, &got))
			n = len(body)
		}
		b.ReportMetric(float64(n)/(1<<20), "MB")
	})
	b.Run("rows", func(b *testing.B) {
		var n int
		for b.Loop() {
			body, err := json.Marshal(toWire(s))
			require.NoError(b, err)
			var w wireSnap
			require.NoError(b, json.Unmarshal(body, &w))
			_, err = fromWire(w)
			require.NoError(b, err)
			n = len(body)
		}
		b.ReportMetric(float64(n)/(1<<20), "MB")
	})
}

// summarized is the snapshot as protocol 2 carried it: every task with
// nothing live behind it in its summary form, as JSON objects.
func summarized(s coord.Snapshot) coord.Snapshot {
	tasks := make([]coord.TaskView, len(s.Tasks))
	for i, tv := range s.Tasks {
		tasks[i] = tv.Summary()
	}
	s.Tasks = tasks
	return s
}

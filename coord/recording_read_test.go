package coord

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// A damaged recording (a truncated last line) plays up to the damage and
// says where it stopped; a recording not on this machine names its holder.
func TestReadRecordingStopsAtTheDamage(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	st, err := sqlite.Open(filepath.Join(root, "store.db"))
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	tk := task.Task{ID: task.NewID(now), Title: "t", Goal: "g", Verify: "true", State: task.StateQueued,
		Pipeline: task.Pipeline{task.PhaseImplement}, Phase: task.PhaseImplement, CreatedAt: now, UpdatedAt: now}
	require.NoError(t, st.TaskInsert(ctx, signedTask(t, tk)))
	s := store.Session{ID: task.NewULID(now), TaskID: tk.ID, Phase: task.PhaseImplement, Holder: "engine-b",
		Status: store.SessionExited, CastPath: "runs/a.cast", StartedAt: now}
	require.NoError(t, st.SessionInsert(ctx, s))

	_, err = ReadRecording(ctx, st, root, tk.ID, "")
	var away *RecordingElsewhere
	require.ErrorAs(t, err, &away)
	require.Equal(t, "engine-b", away.Holder)

	require.NoError(t, os.MkdirAll(filepath.Join(root, "runs"), 0o700))
	cast := `{"version":2,"width":20,"height":4,"timestamp":1}` + "\n" +
		`[0.1, "o", "hello"]` + "\n" + `[0.2, "i", "typed"]` + "\n" + `[0.3, "r", "30x5"]` + "\n" + `[0.4, "o", "wor`
	require.NoError(t, os.WriteFile(filepath.Join(root, "runs/a.cast"), []byte(cast), 0o600))
	rec, err := ReadRecording(ctx, st, root, tk.ID, "")
	require.NoError(t, err)
	require.Equal(t, s.ID, rec.SessionID)
	require.Equal(t, [2]int{20, 4}, [2]int{rec.Cols, rec.Rows})
	require.Len(t, rec.Events, 2, "output and resize up to the damage, no input")
	require.Contains(t, rec.Damaged, "line 5")
}

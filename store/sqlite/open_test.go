package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// rawDB opens path with no orchestra checks, to build or inspect files the
// way another program would.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func pragmaInt(t *testing.T, db *sql.DB, name string) int64 {
	t.Helper()
	var v int64
	require.NoError(t, db.QueryRow("PRAGMA "+name).Scan(&v))
	return v
}

func sampleTask(title string) task.Task {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return task.Task{ID: task.NewID(at), Title: title, Goal: "g", Verify: "true", Pipeline: task.DefaultPipeline(),
		State: task.StateQueued, Phase: task.PhaseFrame, CreatedAt: at, UpdatedAt: at}
}

// requireRefusedUntouched opens path, expects an error wrapping want that
// names the path, and checks the directory holds exactly the bytes it held.
func requireRefusedUntouched(t *testing.T, path string, want error) {
	t.Helper()
	dir := filepath.Dir(path)
	before := snapshot(t, dir)
	st, err := Open(path)
	if err == nil {
		_ = st.Close()
	}
	require.ErrorIs(t, err, want)
	require.Contains(t, err.Error(), path, "the refusal names the file")
	after := snapshot(t, dir)
	for name, content := range after {
		require.Equal(t, len(before[name]), len(content), "file %s changed size", name)
		require.True(t, before[name] == content, "a refused open modified %s", name)
	}
	require.Len(t, after, len(before), "a refused open must not add files")
}

// snapshot maps every file name in dir to its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = string(b)
	}
	return out
}

func TestOpenCreatesFileAndDirectory(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	path := DefaultPath(root)
	require.Equal(t, filepath.Join(root, ".orchestra", "orchestra.db"), path)

	st, err := Open(path)
	require.NoError(t, err)
	require.Equal(t, path, st.Path())
	require.NoError(t, st.Close())

	db := rawDB(t, path)
	require.EqualValues(t, applicationID, pragmaInt(t, db, "application_id"))
	require.EqualValues(t, len(migrations), pragmaInt(t, db, "user_version"))
	var mode string
	require.NoError(t, db.QueryRow("PRAGMA journal_mode").Scan(&mode))
	require.Equal(t, "wal", mode)

	// Reopening our own file is fine and keeps the data.
	st, err = Open(path)
	require.NoError(t, err)
	require.NoError(t, st.Close())
}

func TestOpenRefusesGarbage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "orchestra.db")
	junk := make([]byte, 8192)
	for i := range junk {
		junk[i] = byte(i*7 + 3)
	}
	require.NoError(t, os.WriteFile(path, junk, 0o644))
	requireRefusedUntouched(t, path, store.ErrForeign)

	short := filepath.Join(t.TempDir(), "orchestra.db")
	require.NoError(t, os.WriteFile(short, []byte("hi"), 0o644))
	requireRefusedUntouched(t, short, store.ErrForeign)
}

func TestOpenRefusesCorruptSQLite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "orchestra.db")
	// The right magic followed by nonsense: SQLite itself must say no.
	b := append([]byte("SQLite format 3\x00"), make([]byte, 4080)...)
	for i := 16; i < len(b); i++ {
		b[i] = 0xff
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))
	requireRefusedUntouched(t, path, store.ErrForeign)
}

func TestOpenRefusesForeignSQLite(t *testing.T) {
	t.Parallel()
	t.Run("tables without application id", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "app.db")
		db := rawDB(t, path)
		_, err := db.Exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')")
		require.NoError(t, err)
		require.NoError(t, db.Close())
		requireRefusedUntouched(t, path, store.ErrForeign)
	})
	t.Run("another application id", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "app.db")
		db := rawDB(t, path)
		_, err := db.Exec("PRAGMA application_id = 1234")
		require.NoError(t, err)
		require.NoError(t, db.Close())
		requireRefusedUntouched(t, path, store.ErrForeign)
	})
}

func TestOpenRefusesTooNew(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "orchestra.db")
	st, err := Open(path)
	require.NoError(t, err)
	require.NoError(t, st.Close())
	db := rawDB(t, path)
	_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1))
	require.NoError(t, err)
	_, err = db.Exec("PRAGMA wal_checkpoint(TRUNCATE)")
	require.NoError(t, err)
	require.NoError(t, db.Close())
	requireRefusedUntouched(t, path, store.ErrTooNew)
}

func TestOpenMigratesVersion1(t *testing.T) {
	t.Parallel()
	require.GreaterOrEqual(t, len(migrations), 2, "this test needs a step after the first")
	path := filepath.Join(t.TempDir(), "orchestra.db")
	old, err := open(path, 1)
	require.NoError(t, err)
	tk := sampleTask("from version 1")
	require.NoError(t, old.TaskInsert(t.Context(), tk))
	require.NoError(t, old.Close())

	db := rawDB(t, path)
	require.EqualValues(t, 1, pragmaInt(t, db, "user_version"))
	require.False(t, hasIndex(t, db, "sessions_task"), "version 1 has no per-task indexes")
	require.NoError(t, db.Close())

	st, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	got, err := st.TaskGet(t.Context(), tk.ID)
	require.NoError(t, err)
	require.Equal(t, tk, got, "the row survives the migration")

	db = rawDB(t, path)
	require.EqualValues(t, len(migrations), pragmaInt(t, db, "user_version"))
	require.True(t, hasIndex(t, db, "sessions_task"))
}

func hasIndex(t *testing.T, db *sql.DB, name string) bool {
	t.Helper()
	var n int
	require.NoError(t, db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = ?", name).Scan(&n))
	return n == 1
}

// TestTwoHandlesShareTheFile opens the file twice, as the console and a
// `correct` from another terminal would, and writes from both.
func TestTwoHandlesShareTheFile(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "orchestra.db")
	a, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	b, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = b.Close() })

	tk := sampleTask("shared")
	require.NoError(t, a.TaskInsert(ctx, tk))
	got, err := b.TaskGet(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, tk, got)

	d := store.Decision{ID: task.NewULID(tk.CreatedAt), TaskID: tk.ID, Text: "stop", Author: "ops", At: tk.CreatedAt}
	require.NoError(t, b.DecisionInsert(ctx, d))
	ds, err := a.DecisionList(ctx, tk.ID)
	require.NoError(t, err)
	require.Equal(t, []store.Decision{d}, ds)

	// Both race to lease the task: the guard holds across connections.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, st := range []*Store{a, b} {
		wg.Go(func() {
			_, errs[i] = st.LeaseGrant(ctx, store.LeaseGrantParams{TaskID: tk.ID, Holder: fmt.Sprint(i),
				ExpectState: task.StateQueued, GrantedAt: tk.CreatedAt, Deadline: tk.CreatedAt.Add(time.Minute)})
		})
	}
	wg.Wait()
	require.True(t, (errs[0] == nil) != (errs[1] == nil), "exactly one grant wins: %v", errs)
	for _, err := range errs {
		if err != nil {
			require.ErrorIs(t, err, store.ErrConflict)
		}
	}
	token, err := a.TaskToken(ctx, tk.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, token)
}

// TestOpenConcurrentCreate has two handles create the same new file at once;
// the migration transaction lets exactly one of them build the schema.
func TestOpenConcurrentCreate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "new", "orchestra.db")
	var wg sync.WaitGroup
	stores := make([]*Store, 2)
	errs := make([]error, 2)
	for i := range stores {
		wg.Go(func() { stores[i], errs[i] = Open(path) })
	}
	wg.Wait()
	for i, st := range stores {
		require.NoError(t, errs[i])
		require.NoError(t, st.TaskInsert(context.Background(), sampleTask(fmt.Sprint(i))))
		require.NoError(t, st.Close())
	}
}

// TestOpenReadsHeaderThroughWAL bumps the version while another handle keeps
// the file open, so the new header is still only in the WAL: Open must see it.
func TestOpenReadsHeaderThroughWAL(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "orchestra.db")
	st, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	db := rawDB(t, path)
	db.SetMaxOpenConns(1)
	_, err = db.Exec(fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1))
	require.NoError(t, err)
	fi, err := os.Stat(path + "-wal")
	require.NoError(t, err)
	require.Positive(t, fi.Size(), "the bump must still be in the WAL for this test to mean anything")

	_, err = Open(path)
	require.ErrorIs(t, err, store.ErrTooNew)
}

// TestOpenAdoptsEmptySQLite takes over an empty SQLite file whatever its
// user_version says, since without our application id that number is not ours.
func TestOpenAdoptsEmptySQLite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "orchestra.db")
	db := rawDB(t, path)
	_, err := db.Exec("PRAGMA user_version = 1")
	require.NoError(t, err)
	require.NoError(t, db.Close())

	st, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	tk := sampleTask("adopted")
	require.NoError(t, st.TaskInsert(t.Context(), tk))
	_, err = st.TaskGet(t.Context(), tk.ID)
	require.NoError(t, err)
}

// Every connection a store opens, the header check's included, waits for
// another process's lock instead of failing at once with SQLITE_BUSY: the
// CLI opens the store while the console writes it.
func TestEveryConnectionWaitsForALock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "orchestra.db")
	st, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.EqualValues(t, busyTimeoutMS, pragmaInt(t, st.w, "busy_timeout"), "the writer")
	require.EqualValues(t, busyTimeoutMS, pragmaInt(t, st.r, "busy_timeout"), "the readers")
	for _, wal := range []bool{false, true} {
		db, err := sql.Open("sqlite", inspectDSN(path, wal))
		require.NoError(t, err)
		require.EqualValues(t, busyTimeoutMS, pragmaInt(t, db, "busy_timeout"), "the header check (wal %v)", wal)
		if wal {
			// (immutable=1 does not read the WAL, which still holds the
			// schema here; inspect uses it only when there is no WAL.)
			require.EqualValues(t, applicationID, pragmaInt(t, db, "application_id"), "it reads the store")
		}
		_, err = db.Exec("CREATE TABLE nope (x)")
		require.Error(t, err, "it is read-only")
		require.NoError(t, db.Close())
	}
}

// A store made before the summary columns gets them filled from its
// verdicts and sessions, and the summaries read the same as the ledger.
func TestOpenMigratesTaskSummaries(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "orchestra.db")
	old, err := open(path, 6)
	require.NoError(t, err)
	ctx := t.Context()
	tk := sampleTask("from version 6")
	bare := sampleTask("no verdict")
	bare.ID = task.NewID(tk.CreatedAt.Add(time.Second))
	bare.CreatedAt = tk.CreatedAt.Add(time.Second)
	require.NoError(t, old.TaskInsert(ctx, tk))
	require.NoError(t, old.TaskInsert(ctx, bare))
	for i, m := range []string{"opus", "", "sonnet", "opus"} {
		at := tk.CreatedAt.Add(time.Duration(i) * time.Minute)
		require.NoError(t, old.SessionInsert(ctx, store.Session{ID: task.NewULID(at), TaskID: tk.ID, Phase: task.PhasePlan,
			Model: m, Status: store.SessionExited, StartedAt: at, EndedAt: at}))
	}
	green := task.Verdict{Status: task.VerdictOK, Command: "go test ./...", Passed: 3, Counted: true, Tail: "ok\n",
		OutputBytes: 3, Duration: time.Second, At: tk.CreatedAt.Add(time.Hour)}
	red := task.Verdict{Status: task.VerdictError, Command: "go test ./...", ExitCode: 2, Detail: "no go.mod",
		At: tk.CreatedAt.Add(2 * time.Hour)}
	require.NoError(t, old.VerdictInsert(ctx, store.VerdictRecord{TaskID: tk.ID, Phase: task.PhasePlan, Verdict: green}))
	require.NoError(t, old.VerdictInsert(ctx, store.VerdictRecord{TaskID: tk.ID, Phase: task.PhasePlan, Verdict: red}))
	require.NoError(t, old.Close())

	st, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	sums, err := st.TaskSummaries(ctx)
	require.NoError(t, err)
	require.Len(t, sums, 2)
	require.Equal(t, tk, sums[0].Task)
	require.Equal(t, []string{"opus", "sonnet"}, sums[0].Models)
	require.NotNil(t, sums[0].Verdict)
	require.Equal(t, red, *sums[0].Verdict)
	require.Nil(t, sums[1].Verdict)
	require.Empty(t, sums[1].Models)

	// The triggers keep them from then on: an update that changes a
	// session's model, and a task imported with its sessions.
	ss, err := st.SessionList(ctx, tk.ID)
	require.NoError(t, err)
	ss[0].Model = "haiku"
	require.NoError(t, st.SessionUpdate(ctx, ss[0]))
	imp := sampleTask("imported")
	imp.ID = task.NewID(tk.CreatedAt.Add(2 * time.Second))
	imp.CreatedAt = tk.CreatedAt.Add(2 * time.Second)
	require.NoError(t, st.TaskImport(ctx, store.TaskImportParams{Task: imp, Sessions: []store.Session{
		{ID: task.NewULID(imp.CreatedAt), TaskID: imp.ID, Phase: task.PhasePlan, Model: "gpt-5", Status: store.SessionExited,
			StartedAt: imp.CreatedAt, EndedAt: imp.CreatedAt},
	}}))
	sums, err = st.TaskSummaries(ctx)
	require.NoError(t, err)
	require.Len(t, sums, 3)
	require.Equal(t, []string{"haiku", "sonnet", "opus"}, sums[0].Models)
	require.Equal(t, []string{"gpt-5"}, sums[2].Models)
}

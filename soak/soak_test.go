package soak

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// KillsEnv sets the number of kill points (20 by default: what CI runs).
// bench/soak.sh runs the long version.
const KillsEnv = "ORCHESTRA_SOAK_KILLS"

// liveTasks is how many tasks the soak keeps in flight.
const liveTasks = 4

type soak struct {
	t      *testing.T
	bin    string
	root   string
	record string
	rng    *rand.Rand

	mu       sync.Mutex
	ids      []string
	accepted []string // correction texts a console acknowledged
	sent     int
	latency  []time.Duration // restart to first confirmed session
}

// TestSoak runs tasks with corrections under repeated kill -9 of the
// engine and checks, at the end: no task lost, no correction lost or typed
// twice, the store's integrity, no orphan process, no attempt charged for a
// kill, and every task green.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("the soak builds the binary and kills it many times: skipped with -short")
	}
	kills := 20
	if v := os.Getenv(KillsEnv); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, KillsEnv)
		kills = n
	}
	s := &soak{t: t, root: t.TempDir(), record: filepath.Join(t.TempDir(), "record"), rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))}
	s.bin = filepath.Join(t.TempDir(), "orchestra-tui")
	out, err := exec.Command("go", "build", "-o", s.bin, "../cmd/orchestra-tui").CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, project.WriteProject(s.root))
	s.configure()

	for range liveTasks {
		s.add()
	}
	start := time.Now()
	for k := range kills {
		s.runAndKill(k)
		if s.liveCount() < liveTasks {
			s.add()
		}
	}
	// The last run goes to rest by itself.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	final := exec.CommandContext(ctx, s.bin, "run", "--headless", "-C", s.root)
	out, err = final.CombinedOutput()
	require.NoError(t, err, "the final run:\n%s", out)
	s.check(kills, time.Since(start))
}

func (s *soak) configure() {
	t := s.t
	sc := agent.Script{RecordDir: s.record, Phases: map[task.Phase][]agent.Entry{
		task.PhaseImplement: {{Edits: []agent.Edit{{Path: "calc.go", Content: project.CalcFixed}}}},
	}}
	pace := 30
	sc.PaceMS = &pace
	data, err := json.Marshal(sc)
	require.NoError(t, err)
	script := filepath.Join(t.TempDir(), "script.json")
	require.NoError(t, os.WriteFile(script, data, 0o600))
	argv, _ := json.Marshal([]string{s.bin, "agent", "--script", script})
	cfg := fmt.Sprintf(`[harness.scripted]
argv = %s

[lease]
tick = "100ms"

[[slots]]
name = "soak"
harness = "scripted"
capacity = %d
`, argv, liveTasks)
	require.NoError(t, os.WriteFile(filepath.Join(s.root, "orchestra.toml"), []byte(cfg), 0o600))
}

func (s *soak) add() {
	s.mu.Lock()
	n := len(s.ids) + 1
	s.mu.Unlock()
	out, err := exec.Command(s.bin, "add", "-C", s.root, "--title", fmt.Sprintf("soak %d", n), "--goal", project.Goal,
		"--verify", project.VerifyCommand, "--pipeline", "implement", "--harness", "scripted").CombinedOutput()
	require.NoError(s.t, err, string(out))
	id := strings.TrimSpace(string(out))
	if f := strings.Fields(id); len(f) > 0 {
		id = f[len(f)-1]
	}
	s.mu.Lock()
	s.ids = append(s.ids, id)
	s.mu.Unlock()
}

type statusRow struct {
	ID      string `json:"id"`
	State   string `json:"state"`
	Attempt int    `json:"attempt"`
	Verdict string `json:"verdict"`
}

func (s *soak) status() []statusRow {
	out, err := exec.Command(s.bin, "status", "-C", s.root, "--json").Output()
	require.NoError(s.t, err)
	var rows []statusRow
	require.NoError(s.t, json.Unmarshal(out, &rows), string(out))
	return rows
}

func (s *soak) liveCount() int {
	n := 0
	for _, r := range s.status() {
		if r.State != string(task.StateAwaitingReview) && r.State != string(task.StateCompleted) && r.State != string(task.StateFailed) && r.State != string(task.StateCancelled) {
			n++
		}
	}
	return n
}

// runAndKill starts the engine, sends a correction once a session is
// confirmed, and kills the engine with SIGKILL at a random point.
func (s *soak) runAndKill(k int) {
	t := s.t
	cmd := exec.Command(s.bin, "run", "--headless", "--wait", "-C", s.root)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = cmd.Stdout
	began := time.Now()
	require.NoError(t, cmd.Start())
	confirmed := make(chan string, 1)
	lines := make(chan struct{})
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if f := strings.Fields(sc.Text()); len(f) >= 3 && f[2] == string(task.EvBriefDelivered) {
				select {
				case confirmed <- f[1]:
				default:
				}
			}
		}
	}()
	// A kill point anywhere from the first instants (mid-start, mid-
	// reconcile) to five seconds in (sessions, gates, corrections); one in
	// four runs up to twenty seconds, so tasks also finish (and new ones
	// are added) between kills, not only in the final run.
	d := time.Duration(100+s.rng.IntN(5000)) * time.Millisecond
	if s.rng.IntN(4) == 0 {
		d = time.Duration(5000+s.rng.IntN(15000)) * time.Millisecond
	}
	killAt := time.NewTimer(d)
	defer killAt.Stop()
	var wg sync.WaitGroup
	select {
	case id := <-confirmed:
		s.mu.Lock()
		s.latency = append(s.latency, time.Since(began))
		s.mu.Unlock()
		wg.Go(func() { s.correct(id, k) })
		<-killAt.C
	case <-killAt.C:
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	<-lines
	wg.Wait()
}

// correct sends one correction through the running engine; one the engine
// acknowledged must never be lost.
func (s *soak) correct(id string, k int) {
	text := fmt.Sprintf("soak correction %d for %s", k, id)
	s.mu.Lock()
	s.sent++
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := exec.CommandContext(ctx, s.bin, "correct", "-C", s.root, id, text).Run(); err == nil {
		s.mu.Lock()
		s.accepted = append(s.accepted, text)
		s.mu.Unlock()
	}
}

func (s *soak) check(kills int, took time.Duration) {
	t := s.t
	ctx := context.Background()
	rows := s.status()
	byID := map[string]statusRow{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	lost, notGreen, charged := 0, 0, 0
	for _, id := range s.ids {
		r, ok := byID[id]
		switch {
		case !ok:
			lost++
		case r.State != string(task.StateAwaitingReview):
			notGreen++
		case r.Attempt != 1:
			charged += r.Attempt - 1
		}
	}

	// Corrections: every acknowledged one is stored; none typed twice
	// into one session.
	st, err := sqlite.Open(sqlite.DefaultPath(s.root))
	require.NoError(t, err)
	stored := map[string]bool{}
	for _, id := range s.ids {
		ds, err := st.DecisionList(ctx, task.ID(id))
		require.NoError(t, err)
		for _, d := range ds {
			stored[d.Text] = true
		}
	}
	require.NoError(t, st.Close())
	lostCorrections := 0
	for _, text := range s.accepted {
		if !stored[text] {
			lostCorrections++
		}
	}
	inputs, err := agent.ReadInputLog(s.record)
	require.NoError(t, err)
	typed := map[string]int{}
	for _, in := range inputs {
		if in.Kind == agent.InputDecision {
			typed[in.Session+"\x00"+in.Text]++
		}
	}
	twice := 0
	for _, n := range typed {
		if n > 1 {
			twice += n - 1
		}
	}

	db, err := sql.Open("sqlite", sqlite.DefaultPath(s.root))
	require.NoError(t, err)
	var integrity string
	require.NoError(t, db.QueryRow("PRAGMA integrity_check").Scan(&integrity))
	require.NoError(t, db.Close())

	orphans := 0
	for _, id := range s.ids {
		orphans += len(session.Marked(id)) + len(session.Marked(verify.GateMark(id)))
	}

	lat := slices.Clone(s.latency)
	slices.Sort(lat)
	median, worst := time.Duration(0), time.Duration(0)
	if len(lat) > 0 {
		median, worst = lat[len(lat)/2], lat[len(lat)-1]
	}
	t.Logf("soak: %d kill points in %s; %d tasks (%d lost, %d not green); corrections %d sent, %d acknowledged, %d lost, %d typed twice; attempts charged by kills %d; integrity %s; orphans %d; restart to first confirmed session: median %s, max %s over %d restarts",
		kills, took.Round(time.Second), len(s.ids), lost, notGreen, s.sent, len(s.accepted), lostCorrections, twice, charged, integrity, orphans,
		median.Round(time.Millisecond), worst.Round(time.Millisecond), len(lat))
	require.Zero(t, lost, "tasks lost")
	require.Zero(t, notGreen, "tasks not green: %+v", rows)
	require.Zero(t, lostCorrections, "acknowledged corrections lost")
	require.Zero(t, twice, "corrections typed twice into one session")
	require.Zero(t, charged, "attempts charged by kills: %+v", rows)
	require.Equal(t, "ok", integrity)
	require.Zero(t, orphans, "processes of the soak's tasks still alive")
}

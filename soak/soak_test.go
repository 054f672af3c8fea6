package soak

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/demo/project"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// KillsEnv sets the number of kill points of each soak (20 by default:
// what CI runs). bench/soak.sh runs the long version.
const KillsEnv = "ORCHESTRA_SOAK_KILLS"

// liveTasks is how many tasks the soak keeps in flight.
const liveTasks = 4

// mode is the process the soak kills, and so where the sessions live.
type mode int

const (
	// hosts kills `orchestra-tui engine --foreground`, the background
	// engine users run (the console starts it), with every session in a
	// session host of its own that outlives the engine and is taken up by
	// the next one.
	hosts mode = iota
	// headless kills `orchestra-tui run --headless --wait`, console and
	// engine in one process, its sessions inside it: they die with it and
	// are requeued.
	headless
)

func (m mode) String() string {
	if m == hosts {
		return "hosts"
	}
	return "headless"
}

type soak struct {
	t      *testing.T
	mode   mode
	bin    string
	root   string
	record string
	log    *os.File // every run's output, for the failure message
	rng    *rand.Rand
	st     *sqlite.Store

	mu       sync.Mutex
	ids      []string
	accepted []string // correction texts a console acknowledged
	sent     int
	latency  []time.Duration // restart to first live session
	adopted  int             // restarts whose first live session was taken up from its host
	points   []killPoint     // each run killed, in order
}

// killPoint is one run the soak killed: the ledger's last sequence number
// before it started, and how long it ran, so a failure can say which kill
// point wrote each event of a task.
type killPoint struct {
	n     int // 1-based, as the runs' log heads them
	after int64
	ran   time.Duration
}

// TestSoak runs tasks with corrections under repeated kill -9 of the
// background engine, its sessions in session hosts (the mode users run),
// and checks, at the end: no task lost, no correction lost or typed twice,
// the store's integrity, no orphan process, no attempt charged for a kill,
// and every task green.
func TestSoak(t *testing.T) { runSoak(t, hosts) }

// TestSoakHeadless is the same soak against `run --headless`, whose
// sessions die with it and are requeued at each restart.
func TestSoakHeadless(t *testing.T) { runSoak(t, headless) }

func runSoak(t *testing.T, m mode) {
	if testing.Short() {
		t.Skip("the soak builds the binary and kills it many times: skipped with -short")
	}
	kills := 20
	if v := os.Getenv(KillsEnv); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, KillsEnv)
		kills = n
	}
	s := &soak{t: t, mode: m, root: t.TempDir(), record: filepath.Join(t.TempDir(), "record"),
		rng: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))}
	s.bin = filepath.Join(t.TempDir(), "orchestra-tui")
	out, err := exec.Command("go", "build", "-o", s.bin, "../cmd/orchestra-tui").CombinedOutput()
	require.NoError(t, err, string(out))
	require.NoError(t, project.WriteProject(s.root))
	s.configure()
	s.log, err = os.Create(filepath.Join(t.TempDir(), "runs.log"))
	require.NoError(t, err)
	defer s.log.Close()
	t.Cleanup(s.stopLeftovers)

	for range liveTasks {
		s.add()
	}
	s.st, err = sqlite.Open(sqlite.DefaultPath(s.root))
	require.NoError(t, err)
	defer s.st.Close()
	start := time.Now()
	for k := range kills {
		s.runAndKill(k)
		if s.liveCount() < liveTasks {
			s.add()
		}
	}
	s.finalRun()
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
	require.NoError(s.t, err, "%s\n%s", out, s.tail())
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
		if !atRest(task.State(r.State)) {
			n++
		}
	}
	return n
}

// atRest reports whether a task in state st waits for nobody but a human.
func atRest(st task.State) bool {
	switch st {
	case task.StateAwaitingReview, task.StateCompleted, task.StateFailed, task.StateCancelled, task.StateParked:
		return true
	}
	return false
}

// allAtRest reports whether every task in the store is at rest.
func (s *soak) allAtRest(ctx context.Context) (bool, error) {
	ts, err := s.st.TaskList(ctx, store.TaskListParams{})
	if err != nil {
		return false, err
	}
	for _, tk := range ts {
		if !atRest(tk.State) {
			return false, nil
		}
	}
	return len(ts) > 0, nil
}

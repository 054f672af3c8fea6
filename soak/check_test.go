package soak

import (
	"context"
	"database/sql"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

func (s *soak) check(kills int, took time.Duration) {
	t := s.t
	ctx := context.Background()
	rows := s.status()
	byID := map[string]statusRow{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	lost, notGreen, charged := 0, 0, 0
	var why []string // each charged task's ledger, by kill point
	for _, id := range s.ids {
		r, ok := byID[id]
		switch {
		case !ok:
			lost++
		case r.State != string(task.StateAwaitingReview):
			notGreen++
		case r.Attempt != 1:
			charged += r.Attempt - 1
			why = append(why, s.explain(id, r.Attempt))
		}
	}

	// Corrections: every acknowledged one is stored; none typed twice
	// into one session.
	stored := map[string]bool{}
	for _, id := range s.ids {
		ds, err := s.st.DecisionList(ctx, task.ID(id))
		require.NoError(t, err)
		for _, d := range ds {
			stored[d.Text] = true
		}
	}
	inputs, err := agent.ReadInputLog(s.record)
	require.NoError(t, err)
	typed := map[string]int{}
	reached := map[string]bool{} // typed into a session or read in a brief
	for _, in := range inputs {
		if in.Kind == agent.InputDecision {
			typed[in.Session+"\x00"+in.Text]++
		}
		for _, text := range s.accepted {
			if (in.Kind == agent.InputDecision || in.Kind == agent.InputBrief) && strings.Contains(in.Text, text) {
				reached[text] = true
			}
		}
	}
	lostCorrections, unread := 0, 0
	for _, text := range s.accepted {
		if !stored[text] {
			lostCorrections++
		}
		if !reached[text] {
			unread++
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

	orphans := len(s.processes())
	for _, id := range s.ids {
		orphans += len(session.Marked("", id)) + len(session.Marked("", verify.GateMark(id)))
	}

	lat := slices.Clone(s.latency)
	slices.Sort(lat)
	median, worst := time.Duration(0), time.Duration(0)
	if len(lat) > 0 {
		median, worst = lat[len(lat)/2], lat[len(lat)-1]
	}
	t.Logf("soak (%s): %d kill points in %s; %d tasks (%d lost, %d not green); corrections %d sent, %d acknowledged, %d lost, %d typed twice, %d never reached an agent (the task ended first); attempts charged by kills %d; integrity %s; orphans %d; restart to first live session: median %s, max %s over %d restarts (%d of them a session taken up from its host)",
		s.mode, kills, took.Round(time.Second), len(s.ids), lost, notGreen, s.sent, len(s.accepted), lostCorrections, twice, unread, charged, integrity, orphans,
		median.Round(time.Millisecond), worst.Round(time.Millisecond), len(lat), s.adopted)
	require.Zero(t, lost, "tasks lost")
	require.Zero(t, notGreen, "tasks not green: %+v", rows)
	require.Zero(t, lostCorrections, "acknowledged corrections lost")
	require.Zero(t, twice, "corrections typed twice into one session")
	require.Zero(t, charged, "attempts charged by kills: %+v\n%s", rows, strings.Join(why, "\n"))
	require.Equal(t, "ok", integrity)
	require.Zero(t, orphans, "processes of the soak still alive: %v", s.processes())
}

// processes returns the pids of live processes running the soak's own
// binary: engines, session hosts and scripted agents alike.
func (s *soak) processes() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		// A zombie has no exe link: it is gone, only not collected yet.
		if exe, err := os.Readlink("/proc/" + e.Name() + "/exe"); err == nil && exe == s.bin {
			pids = append(pids, pid)
		}
	}
	return pids
}

// stopLeftovers ends whatever a failed soak left running: the engine's
// stop first (it stops the session hosts), then, by pid, every process of
// the soak's binary.
func (s *soak) stopLeftovers() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = exec.CommandContext(ctx, s.bin, "stop", "-C", s.root).Run()
	for _, pid := range s.processes() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

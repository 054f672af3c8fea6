package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/store/sqlite"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// idleSessions is how many scripted sessions sit at their prompts while the
// console's CPU is measured.
const idleSessions = 8

// idleWindow is how long the console's CPU time is measured for.
const idleWindow = 10 * time.Second

// clockTicks is the unit of utime and stime in /proc/PID/stat (USER_HZ,
// 100 on every Linux architecture Go supports).
const clockTicks = 100

// BenchmarkIdleCPU measures the console's CPU while idleSessions scripted
// sessions sit at their prompts: the agents ignored their briefs, so
// nothing on any screen changes. It reports the console process's CPU time
// (user+system) over idleWindow as a percentage of one core, in the default
// view, with --no-anim, and in grid mode showing every pane. Run it with
// bench/idle_cpu.sh.
func BenchmarkIdleCPU(b *testing.B) {
	for _, c := range []struct {
		name string
		args []string
		keys []string
	}{
		{"live", nil, nil},
		{"no-anim", []string{"--no-anim"}, nil},
		{"grid", nil, []string{"g"}},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := newFixture(b, agent.Script{Phases: map[task.Phase][]agent.Entry{
				task.PhasePlan: {{Behave: agent.BehaveIgnoreFirst}},
			}}, fmt.Sprintf("[[slots]]\nname = \"scripted\"\nharness = \"scripted\"\ncapacity = %d\n", idleSessions))
			for i := range idleSessions {
				f.orch(b, "add", "--title", fmt.Sprintf("idle %d", i+1), "--goal", "sit at the prompt",
					"--verify", "true", "--harness", "scripted", "--pipeline", "plan")
			}
			cmdline := "cd " + shellQuote(f.root) + " && exec " + shellQuote(f.bin) + " --in-process"
			for _, a := range c.args {
				cmdline += " " + shellQuote(a)
			}
			tm := startTerm(b, cmdline, "COLORTERM=truecolor")
			tm.waitText(60*time.Second, fmt.Sprintf("%d live", idleSessions))
			waitDelivered(b, f.root, idleSessions, 60*time.Second)
			if len(c.keys) > 0 {
				tm.keys(c.keys...)
			}
			// Let the last deliveries' echoes and the key's relayout settle
			// before the window opens.
			tm.waitText(5*time.Second, strings.TrimSpace(agent.ReadyMarker))
			pid := tm.panePID()
			for range b.N {
				self0, kids0 := cpuTicks(b, pid)
				start := time.Now()
				timer := time.NewTimer(idleWindow)
				<-timer.C
				self1, kids1 := cpuTicks(b, pid)
				secs := time.Since(start).Seconds()
				b.ReportMetric(100*float64(self1-self0)/clockTicks/secs, "%cpu")
				// Short-lived children the console ran and reaped in the
				// window (the worker's git calls); the agents are still
				// running and are not counted.
				b.ReportMetric(100*float64(kids1-kids0)/clockTicks/secs, "%cpu-children")
			}
			b.ReportMetric(0, "ns/op")
		})
	}
}

// waitDelivered waits until n sessions have had their briefs delivered,
// read from the console's store as a second process would.
func waitDelivered(b *testing.B, root string, n int, d time.Duration) {
	b.Helper()
	st, err := sqlite.Open(sqlite.DefaultPath(root))
	require.NoError(b, err)
	defer st.Close()
	ctx := context.Background()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(lookInterval)
	defer tick.Stop()
	for {
		evs, err := st.EventList(ctx, store.EventListParams{})
		require.NoError(b, err)
		got := 0
		for _, ev := range evs {
			if ev.Kind == task.EvBriefDelivered {
				got++
			}
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("waited %s for %d briefs to be delivered; %d were", d, n, got)
		}
		<-tick.C
	}
}

// cpuTicks is the user+system CPU time in clock ticks of process pid
// itself and of its children that have exited and been waited for.
func cpuTicks(b *testing.B, pid int) (self, children int64) {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	require.NoError(b, err)
	// The command name is in parentheses and may hold spaces: the fields
	// that follow start after the last ')'. utime, stime, cutime and
	// cstime are fields 14 to 17, so the 12th to 15th after the name.
	s := string(data)
	rest := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	require.Greater(b, len(rest), 14, "short /proc stat: %q", s)
	var v [4]int64
	for i := range v {
		v[i], err = strconv.ParseInt(rest[11+i], 10, 64)
		require.NoError(b, err, "/proc stat field %d: %q", 14+i, s)
	}
	return v[0] + v[1], v[2] + v[3]
}

package engine

import (
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// BenchmarkHostMemory reports what an idle session host costs the
// machine, from /proc/PID/smaps_rollup: its proportional share (Pss: the
// binary's pages shared with the engine and the other hosts split
// between them) and its private memory (Private_Clean + Private_Dirty:
// what goes when it goes), the median and the largest of 8 idle hosts
// whose screens are 80x24 with the default scrollback, sitting at their
// prompts (hostsSettle). With ORCHESTRA_HOST_BIN set the engine is that
// binary too (realEngine).
func BenchmarkHostMemory(b *testing.B) {
	const n = 8
	var hosts []int
	if bin := os.Getenv("ORCHESTRA_HOST_BIN"); bin != "" {
		_, _, hosts = realEngine(b, bin, n, "echo READY; exec cat")
	} else {
		idleEngineWith(b, n, true)
		hosts = hostPids(b)
	}
	require.Len(b, hosts, n)
	settle()
	b.ResetTimer()
	for range b.N {
		var pss, priv []float64
		for _, pid := range hosts {
			r := smapsRollup(b, pid)
			pss = append(pss, float64(r["Pss"]))
			priv = append(priv, float64(r["Private_Clean"]+r["Private_Dirty"]))
		}
		sort.Float64s(pss)
		sort.Float64s(priv)
		b.ReportMetric(pss[n/2], "pss-kB/host")
		b.ReportMetric(priv[n/2], "private-kB/host")
		b.ReportMetric(priv[n-1], "max-private-kB/host")
	}
}

// hostsSettle is how long the memory benchmarks let the hosts sit before
// they measure: an idle host is one whose session has been quiet for a
// while, longer than a host waits before it hands back what its work
// took (host.trimQuiet, 1 s).
const hostsSettle = 3 * time.Second

func settle() {
	t := time.NewTimer(hostsSettle)
	<-t.C
}

// smapsRollup reads the kB figures of /proc/PID/smaps_rollup.
func smapsRollup(b *testing.B, pid int) map[string]int {
	b.Helper()
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	require.NoError(b, err)
	out := map[string]int{}
	for line := range strings.SplitSeq(string(st), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		if f := strings.Fields(v); len(f) == 2 && f[1] == "kB" {
			out[k], _ = strconv.Atoi(f[0])
		}
	}
	return out
}

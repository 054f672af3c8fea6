package worker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The meter counts only rises (a /proc sum falls when a process exits
// unreaped) and looks back one lease.CPUWindow.
func TestCPUMeterCountsRisesOverTheLastMinute(t *testing.T) {
	t.Parallel()
	var m CPUMeter
	t0 := time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC)
	m.Add(t0, 5*time.Second)
	require.Equal(t, 5*time.Second, m.Total())
	require.Zero(t, m.Working(t0), "one reading has no span")
	for i := 1; i <= 90; i++ {
		m.Add(t0.Add(time.Duration(i)*time.Second), 5*time.Second+time.Duration(i)*time.Second)
	}
	used, span := m.Recent(t0)
	require.Equal(t, time.Minute, span, "no further back than the window")
	require.Equal(t, time.Minute, used)
	require.Equal(t, time.Minute, m.Working(t0))
	used, span = m.Recent(t0.Add(80 * time.Second))
	require.Equal(t, [2]time.Duration{10 * time.Second, 10 * time.Second}, [2]time.Duration{used, span}, "from a later instant")
	m.Add(t0.Add(91*time.Second), time.Second) // a busy child exited unreaped
	require.Equal(t, 95*time.Second, m.Total(), "a fall is not counted")
	for i := 92; i <= 160; i++ {
		m.Add(t0.Add(time.Duration(i)*time.Second), time.Second+10*time.Millisecond*time.Duration(i-91))
	}
	require.Zero(t, m.Working(t0.Add(92*time.Second)), "an idle tree is not working")
	used, _ = m.Recent(t0.Add(92 * time.Second))
	require.Less(t, used, time.Second)
	require.Zero(t, m.Working(t0.Add(200*time.Second)), "nothing was read after from")
}

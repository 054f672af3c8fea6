package coord

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/notify"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// One pane stuck three times in 50 s runs the notify command once for it;
// the task then awaiting review is other news and runs it again.
func TestNotifyCommandRunsOncePerSessionStuckAgainAndAgain(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "notices")
		b := setupFake(t, func(cfg *config.Config) {
			cfg.Stuck.After.Duration = 15 * time.Second
			cfg.Notify.Command = []string{"sh", "-c", `cat >> "$1"`, "notify", out}
		})
		b.add(t, task.Pipeline{task.PhaseImplement})
		a, _ := b.launch(t)
		first := b.waitEvent(t, refusalOf(task.ReasonStuck))
		for i := range 2 {
			a.Work("thinking " + strings.Repeat(".", i+1))
			again := b.waitEvent(t, refusalOf(task.ReasonStuck))
			require.Less(t, again.At.Sub(first.At), 50*time.Second, b.dump())
		}
		a.Finish(nil)
		b.waitEvent(t, kindIs(task.EvTaskAwaiting))

		for range 600 { // the clock stands still while the command runs
			if data, _ := os.ReadFile(out); strings.Count(string(data), "\n") >= 2 {
				break
			}
			time.Sleep(time.Second)
		}
		time.Sleep(time.Minute) // a third run, if one were coming, ends meanwhile
		data, err := os.ReadFile(out)
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		require.Len(t, lines, 2, "%s", data)
		require.Contains(t, lines[0], `"kind":"`+notify.KindStuck+`"`)
		require.Contains(t, lines[1], `"kind":"`+notify.KindAwaitingReview+`"`)
	})
}

package e2e

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// curiousKeys are what a new user presses while the demo runs: help, the
// tabs, the grid, the selection. None of them changes a task.
var curiousKeys = []string{"?", "Tab", "g", "j", "k"}

// The demo survives a curious user. Keys pressed at random moments while it
// runs work as in the real console and never break its beats: every run
// ends with its proofs in the banner, stays open on the finished run, and
// exits 0 with "demo: ok" when the user quits. A run quit early (q, and y
// to the question while sessions run) says "demo interrupted" and exits
// 130, never FAILED. The seeds are logged, so a failing run can be
// replayed.
func TestDemoSurvivesACuriousUser(t *testing.T) {
	t.Parallel()
	needTmux(t)
	bin := buildBinary(t, t.TempDir())
	for i, quitEarly := range []bool{false, false, true} {
		seed := uint64(time.Now().UnixNano()) + uint64(i)
		name := "keys"
		if quitEarly {
			name = "quit"
		}
		t.Run(name, func(t *testing.T) {
			parallel(t)
			t.Logf("seed %d", seed)
			rng := rand.New(rand.NewPCG(seed, seed))
			cmdline := shellQuote(bin) + ` demo --fast; echo "demo exited with status $?"; exec sleep 3600`
			tm := startTerm(t, cmdline, "TMPDIR="+t.TempDir(), "USER=operator")
			tm.waitText(60*time.Second, "DEMO ·")

			// Quit at a random moment of the run, or never.
			quitAfter := time.Duration(1<<62 - 1)
			if quitEarly {
				quitAfter = time.Duration(rng.IntN(8000)) * time.Millisecond
			}
			start := time.Now()
			deadline := start.Add(2 * time.Minute)
			var pressed []string
			for {
				s := tm.screen()
				if strings.Contains(s, "DEMO FINISHED") || strings.Contains(s, "DEMO FAILED") || strings.Contains(s, "demo exited with status") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the demo did not finish in 2 minutes; keys pressed: %v; the screen:\n%s", pressed, s)
				}
				if time.Since(start) > quitAfter {
					pressed = append(pressed, "q")
					quit(t, tm)
					break
				}
				k := curiousKeys[rng.IntN(len(curiousKeys))]
				pressed = append(pressed, k)
				tm.keys(k)
				// A person's pace, at random: sometimes a burst, sometimes a
				// pause long enough to read the screen.
				time.Sleep(time.Duration(20+rng.IntN(700)) * time.Millisecond)
			}
			t.Logf("keys pressed: %v", pressed)

			s := tm.screen()
			if quitEarly && !strings.Contains(s, "DEMO FINISHED") {
				// q came before the end: the demo stops, interrupted.
				s = tm.waitText(2*time.Minute, "demo exited with status")
			}
			if !strings.Contains(s, "demo exited with status") {
				// The demo finished and stays open on the run: quit it.
				tm.waitText(10*time.Second, "DEMO FINISHED", "every proof held", "q quits")
				quit(t, tm)
			}
			s = tm.waitText(2*time.Minute, "demo exited with status")
			full := tm.screenWithHistory(200)
			if strings.Contains(s, "demo exited with status 130") {
				if !quitEarly {
					t.Fatalf("interrupted without q:\n%s", full)
				}
				if !strings.Contains(full, "demo interrupted") || strings.Contains(full, "FAILED") {
					t.Fatalf("an interrupted demo says so and nothing else:\n%s", full)
				}
				t.Log("quit early: demo interrupted, status 130")
				return
			}
			if !strings.Contains(s, "demo exited with status 0") || !strings.Contains(full, "demo: ok, every proof held") || strings.Contains(full, "FAILED") {
				t.Fatalf("the demo did not pass its proofs (seed %d, keys %v):\n%s", seed, pressed, full)
			}
		})
	}
}

// quit presses q until the console has gone, answering y to the question
// it asks while sessions run. A q that only closed the help screen is
// pressed again.
func quit(t *testing.T, tm *tmuxTerm) {
	t.Helper()
	for range 5 {
		tm.keys("q")
		asked := false
		if tm.waitScreenOK(5*time.Second, func(s string) bool {
			asked = strings.Contains(s, "Quit?")
			return asked || strings.Contains(s, "demo exited with status")
		}) {
			if asked {
				tm.keys("y")
			}
			return
		}
		// Neither a question nor the end: that q closed the help screen.
	}
	t.Fatalf("q did not quit the demo:\n%s", tm.screen())
}

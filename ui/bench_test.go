package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/verify"
)

// busyScreen fills a 120x40 screen with the kind of coloured text an agent
// and a test run print.
func busyScreen() string {
	var b strings.Builder
	for i := range 60 {
		switch i % 4 {
		case 0:
			fmt.Fprintf(&b, "\x1b[36m●\x1b[0m Editing \x1b[1mpkg/server/handler_%02d.go\x1b[0m: \x1b[2mreplace the mutex with a channel and add a test for the timeout path\x1b[0m\r\n", i)
		case 1:
			fmt.Fprintf(&b, "\x1b[32m+\x1b[0m \x1b[32m\tif err := s.store.Put(ctx, key%02d, value); err != nil { return fmt.Errorf(\"put: %%w\", err) }\x1b[0m\r\n", i)
		case 2:
			fmt.Fprintf(&b, "\x1b[31m-\x1b[0m \x1b[31m\ts.mu.Lock(); defer s.mu.Unlock() // line %d\x1b[0m\r\n", i)
		case 3:
			fmt.Fprintf(&b, "\x1b[38;2;120;200;255m$ go test ./pkg/...\x1b[0m \x1b[42;30m PASS \x1b[0m ok  pkg/server  0.%03ds\r\n", i*7)
		}
	}
	return b.String()
}

func benchEngine() (*stubEngine, task.ID) {
	e := newStubEngine(testNow)
	var live task.ID
	for i := range 200 {
		s := task.States[i%len(task.States)]
		t := task.Task{ID: task.ID(fmt.Sprintf("01JQ8Z3N5V00000000%08d", i)), Title: fmt.Sprintf("task number %d: make the widget frobnicate", i),
			State: s, Phase: task.PhaseImplement, Attempt: i % 3}
		tv := coord.TaskView{Task: t}
		if s.Live() {
			tv.SessionID = "S" + string(t.ID)
			tv.Lease = &coord.LeaseView{Deadline: testNow.Add(time.Duration(i) * time.Minute), WindowOpensIn: time.Minute, SinceProgress: 3 * time.Second, Renewals: 1, MaxRenewals: 6, LastDecision: "renewed", LastReasonText: "the pane made progress"}
			tv.Verdict = &verify.Verdict{Status: verify.StatusIncomplete, Passed: 10, Failed: 1, Counted: true}
		}
		if live == "" && s == task.StateRunning {
			live = t.ID
			e.panes[t.ID] = newStubView(120, 40, busyScreen())
			e.details[t.ID] = runningDetail(t, testNow)
		}
		e.snap.Tasks = append(e.snap.Tasks, tv)
	}
	return e, live
}

// BenchmarkFrame renders a full 200x50 frame: 200 tasks, one live pane and
// lease timers. "unchanged" is a redraw with the pane's screen as it was
// (a lease tick); "changed" has new pane output every frame.
func BenchmarkFrame(b *testing.B) {
	for _, changed := range []bool{false, true} {
		name := map[bool]string{false: "unchanged", true: "changed"}[changed]
		b.Run(name, func(b *testing.B) {
			e, live := benchEngine()
			bb := setupEngine(b, e)
			for bb.m.selID != live {
				bb.m.selID, _ = moveIn(bb.m.tasks.visible(), bb.m.selID, 1)
			}
			bb.size(200, 50)
			v := e.panes[live]
			_ = bb.view()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if changed {
					v.write(string(rune('a' + i%26)))
				}
				_ = bb.view()
			}
		})
	}
}

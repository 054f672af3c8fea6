// Command correctread times a correction from the start of the command
// that sends it to the agent's read of it, against the same text typed by
// `tmux send-keys` into a tmux pane running the same reader (the scripted
// agent, which logs every submitted line with the time it read it), in
// alternating rounds; and the engine's own input path, from
// engine.Client.Do to the agent's read, over one connection. It is the
// driver of bench/correct.sh, which makes the repository, the engine's
// task and the tmux pane.
//
//	go run ./bench/correctread -bin BIN -C DIR -task ID -engine-rec DIR -tmux SOCK -pane TARGET -tmux-rec DIR [-n 21] [-do 200] [-busy 8]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/demo/agent"
	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/task"
)

func main() {
	bin := flag.String("bin", "", "the orchestra-tui binary")
	dir := flag.String("C", ".", "the repository whose engine runs the task")
	id := flag.String("task", "", "the task whose agent sits at its prompt")
	engineRec := flag.String("engine-rec", "", "the record_dir of the engine's scripted agent")
	sock := flag.String("tmux", "", "the tmux server's socket name (-L)")
	pane := flag.String("pane", "", "the tmux pane running the same reader")
	tmuxRec := flag.String("tmux-rec", "", "the record_dir of the tmux pane's scripted agent")
	n := flag.Int("n", 21, "alternating rounds of correct against send-keys")
	do := flag.Int("do", 200, "corrections through engine.Client.Do over one connection, for the input path's p99")
	busy := flag.Int("busy", 0, "busy loops (sh -c 'while :; do :; done') run beside the rounds")
	flag.Parse()
	if *bin == "" || *id == "" || *engineRec == "" || *sock == "" || *pane == "" || *tmuxRec == "" {
		flag.Usage()
		os.Exit(2)
	}
	stop := startBusy(*busy)
	defer stop()

	run := time.Now().UnixNano() % 1e6
	var cli, cliExit, keys []time.Duration
	var ratios []float64
	for i := range *n {
		a := func() {
			text := fmt.Sprintf("probe-%06d-c%03d", run, i)
			t0 := time.Now()
			out, err := exec.Command(*bin, "correct", "-C", *dir, *id, text).CombinedOutput()
			exit := time.Since(t0)
			if err != nil {
				log.Fatalf("correct: %v: %s", err, out)
			}
			cli = append(cli, waitRead(*engineRec, text).Sub(t0))
			cliExit = append(cliExit, exit)
		}
		b := func() {
			text := fmt.Sprintf("probe-%06d-k%03d", run, i)
			t0 := time.Now()
			line := task.DecisionHeader + " " + text
			if out, err := exec.Command("tmux", "-L", *sock, "send-keys", "-t", *pane, line, "Enter").CombinedOutput(); err != nil {
				log.Fatalf("tmux send-keys: %v: %s", err, out)
			}
			keys = append(keys, waitRead(*tmuxRec, text).Sub(t0))
		}
		if i%2 == 0 {
			a()
			b()
		} else {
			b()
			a()
		}
		ratios = append(ratios, float64(cli[i])/float64(keys[i]))
	}
	fmt.Printf("%d alternating rounds, %d busy loops beside them:\n", *n, *busy)
	fmt.Printf("  orchestra-tui correct to the agent's read   median %7.2f ms  (the command's exit %7.2f ms)\n", ms(median(cli)), ms(median(cliExit)))
	fmt.Printf("  tmux send-keys to the same reader's read    median %7.2f ms\n", ms(median(keys)))
	slices.Sort(ratios)
	fmt.Printf("  correct / send-keys                         median of the rounds' ratios %.2fx, ratio of medians %.2fx\n",
		ratios[len(ratios)/2], float64(median(cli))/float64(median(keys)))

	if *do > 0 {
		l := doPath(*dir, *id, *engineRec, *do, run)
		slices.Sort(l)
		fmt.Printf("engine.Client.Do to the agent's read, %d corrections over one connection:\n", len(l))
		fmt.Printf("  p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n", ms(pct(l, 0.5)), ms(pct(l, 0.9)), ms(pct(l, 0.99)), ms(l[len(l)-1]))
	}
}

// doPath sends n corrections through one engine connection, one at a time,
// and returns each one's time to the agent's read.
func doPath(dir, id, rec string, n int, run int64) []time.Duration {
	ctx := context.Background()
	root, err := filepath.Abs(dir)
	if err != nil {
		log.Fatal(err)
	}
	cl, err := engine.Dial(ctx, engine.PathsFor(root).Socket, engine.Options{Kind: "cli", Version: "bench"})
	if err != nil {
		log.Fatal(err)
	}
	defer cl.Close()
	var out []time.Duration
	for i := range n {
		text := fmt.Sprintf("probe-%06d-d%04d", run, i)
		t0 := time.Now()
		res, err := cl.Do(ctx, coord.Command{Kind: coord.CmdCorrect, TaskID: task.ID(id), Text: text, Author: "bench"})
		if err != nil || !res.Delivered {
			log.Fatalf("Do: %v %+v", err, res)
		}
		out = append(out, waitRead(rec, text).Sub(t0))
	}
	return out
}

// waitRead returns the time the agent logged reading the line holding
// text, polling its inputs log.
func waitRead(rec, text string) time.Time {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if at, ok := readAt(filepath.Join(rec, agent.InputsLogName), text); ok {
			return at
		}
		time.Sleep(2 * time.Millisecond) // a bench's poll; the agent's clock is what is measured
	}
	log.Fatalf("the agent never read %q (%s)", text, rec)
	return time.Time{}
}

func readAt(path, text string) (time.Time, bool) {
	f, err := os.Open(path)
	if err != nil {
		return time.Time{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if !strings.Contains(sc.Text(), text) {
			continue
		}
		var r agent.InputRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Kind == agent.InputDecision {
			return r.At, true
		}
	}
	return time.Time{}, false
}

// startBusy starts n busy loops in a process group of their own and
// returns what ends that group.
func startBusy(n int) func() {
	if n == 0 {
		return func() {}
	}
	script := fmt.Sprintf("for i in $(seq %d); do sh -c 'while :; do :; done' & done; wait", n)
	c := exec.Command("sh", "-c", script)
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.Start(); err != nil {
		log.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the loops are running before the first round
	return func() {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGKILL)
		_ = c.Wait()
	}
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func pct(s []time.Duration, p float64) time.Duration {
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Command keyscreen times a key from the terminal that types it to the
// echo on the same terminal's screen: the console focused on a shell pane
// against a tmux client attached to a tmux pane running the same shell, both
// in a pty of the same size, in alternating rounds. Each round types one
// letter no screen shows otherwise (Cyrillic, a different one each round)
// after a random pause, so the rounds fall on every phase of either
// program's redraw clock, and waits for its bytes in what the terminal
// received. It is the driver of bench/keyscreen.sh, which makes the
// repository, the engine's task and the tmux pane.
//
//	go run ./bench/keyscreen -bin BIN -C DIR -tmux SOCK -pane TARGET [-n 200] [-busy 8]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"
)

func main() {
	bin := flag.String("bin", "", "the orchestra-tui binary")
	dir := flag.String("C", ".", "the repository whose engine runs the shell task")
	sock := flag.String("tmux", "", "the tmux server's socket name (-L)")
	pane := flag.String("pane", "", "the tmux session running the same shell")
	n := flag.Int("n", 200, "keys typed into each")
	busy := flag.Int("busy", 0, "busy loops (sh -c 'while :; do :; done') run beside the rounds")
	flag.Parse()
	if *bin == "" || *sock == "" || *pane == "" {
		flag.Usage()
		os.Exit(2)
	}
	stop := startBusy(*busy)
	defer stop()

	console := start(exec.Command(*bin, "-C", *dir, "-no-anim"))
	defer console.close()
	// The first task is selected; i focuses its live pane once it runs.
	console.waitFor("running", 30*time.Second, "the console's first frame with the running task")
	console.quiet(300 * time.Millisecond)
	console.type_("i")
	console.waitFor("ctrl+]", 5*time.Second, "focus mode's hint")
	console.quiet(300 * time.Millisecond)

	client := start(exec.Command("tmux", "-L", *sock, "attach", "-t", *pane))
	defer client.close()
	client.waitFor("$", 10*time.Second, "the tmux client's first frame")
	client.quiet(300 * time.Millisecond)

	letters := []rune("ЖДБЛФЦЧШЩЭЮЯИПГЗЙКМНРСТУ")
	var ours, theirs []time.Duration
	for i := range *n {
		r := letters[i%len(letters)]
		if i%2 == 0 {
			ours = append(ours, console.round(r))
			theirs = append(theirs, client.round(r))
		} else {
			theirs = append(theirs, client.round(r))
			ours = append(ours, console.round(r))
		}
		if i%len(letters) == len(letters)-1 {
			// ^U erases the line: the shell reads nothing, the screens
			// show no letter again.
			console.type_("\x15")
			client.type_("\x15")
			console.quiet(150 * time.Millisecond)
			client.quiet(150 * time.Millisecond)
		}
	}
	p := func(d []time.Duration, q float64) float64 {
		s := slices.Clone(d)
		slices.Sort(s)
		return float64(s[int(q*float64(len(s)-1))].Microseconds()) / 1000
	}
	fmt.Printf("load average %s", loadavg())
	fmt.Printf("key to screen, %d keys each, %d busy loops beside:\n", *n, *busy)
	fmt.Printf("  console (focused shell pane): p50 %6.2f ms  p99 %6.2f ms\n", p(ours, 0.5), p(ours, 0.99))
	fmt.Printf("  tmux pane (same shell):       p50 %6.2f ms  p99 %6.2f ms\n", p(theirs, 0.5), p(theirs, 0.99))
	fmt.Printf("  ratio console/tmux:           p50 %6.2fx   p99 %6.2fx   (goal at or below 1.5x)\n",
		p(ours, 0.5)/p(theirs, 0.5), p(ours, 0.99)/p(theirs, 0.99))
}

// term is a program in a pty of 120x40 and everything it wrote.
type term struct {
	cmd  *exec.Cmd
	f    *os.File
	mu   sync.Mutex
	cond *sync.Cond
	out  []byte
	last time.Time
}

func start(cmd *exec.Cmd) *term {
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "COLORTERM=truecolor")
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		log.Fatalf("start %s: %v", cmd.Path, err)
	}
	t := &term{cmd: cmd, f: f, last: time.Now()}
	t.cond = sync.NewCond(&t.mu)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			k, err := f.Read(buf)
			t.mu.Lock()
			t.out = append(t.out, buf[:k]...)
			t.last = time.Now()
			t.cond.Broadcast()
			t.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	// Wake waiters now and then so their deadlines are checked.
	go func() {
		for range time.Tick(50 * time.Millisecond) {
			t.cond.Broadcast()
		}
	}()
	return t
}

func (t *term) type_(s string) {
	if _, err := io.WriteString(t.f, s); err != nil {
		log.Fatalf("type into %s: %v", t.cmd.Path, err)
	}
}

// waitFor waits until what the program wrote holds s.
func (t *term) waitFor(s string, limit time.Duration, what string) {
	deadline := time.Now().Add(limit)
	t.mu.Lock()
	defer t.mu.Unlock()
	for !bytes.Contains(t.out, []byte(s)) {
		if time.Now().After(deadline) {
			log.Fatalf("%s did not show within %s; the terminal got:\n%q", what, limit, tail(t.out))
		}
		t.cond.Wait()
	}
}

// quiet waits until the program has written nothing for d.
func (t *term) quiet(d time.Duration) {
	for {
		t.mu.Lock()
		since := time.Since(t.last)
		t.mu.Unlock()
		if since >= d {
			return
		}
		time.Sleep(d - since)
	}
}

// round pauses 20 to 70 ms, types r and returns how long its echo took to
// reach the terminal.
func (t *term) round(r rune) time.Duration {
	time.Sleep(time.Duration(20+rand.IntN(50)) * time.Millisecond)
	want := []byte(string(r))
	t.mu.Lock()
	from := len(t.out)
	t.mu.Unlock()
	t0 := time.Now()
	t.type_(string(r))
	deadline := t0.Add(5 * time.Second)
	t.mu.Lock()
	defer t.mu.Unlock()
	for !bytes.Contains(t.out[from:], want) {
		if time.Now().After(deadline) {
			log.Fatalf("%q typed into %s never showed; the terminal got:\n%q", r, t.cmd.Path, tail(t.out[from:]))
		}
		t.cond.Wait()
	}
	return time.Since(t0)
}

func (t *term) close() {
	_ = t.cmd.Process.Signal(syscall.SIGTERM)
	_ = t.f.Close()
	_ = t.cmd.Wait()
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		return b[len(b)-2000:]
	}
	return b
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return string(b)
}

func startBusy(n int) func() {
	var ps []*exec.Cmd
	for range n {
		c := exec.Command("sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			log.Fatalf("busy loop: %v", err)
		}
		ps = append(ps, c)
	}
	return func() {
		for _, c := range ps {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
}

package verify

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// A gate's shell dies with its engine (Pdeathsig), but Pdeathsig reaches
// the engine's own child only: `go test` and the test binary it runs, or
// anything a verify script starts, would run on past a SIGKILLed engine
// and past verify.timeout, until the next engine's sweep found them.
//
// deathWatch closes that gap with a watcher: a tiny shell, in a process
// group of its own (a terminal's ^C reaching the engine does not end it),
// whose standard input is a pipe only the engine holds the write end of.
// The engine writes the gate's process group id to it; when the engine
// dies, however it dies, the kernel closes the pipe, the watcher's read
// ends, and it kills the whole group within moments. A gate that ends
// normally stops its watcher first, so the group id is never signalled
// after it might have been reused.
type deathWatch struct {
	cmd *exec.Cmd
	w   *os.File
}

// watcherScript reads the group id, waits for end of file, and kills the
// group. dash's read returns at end of file with what it read.
const watcherScript = `read -r pg || exit 0
while read -r _; do :; done
kill -KILL "-$pg" 2>/dev/null
exit 0`

// startDeathWatch starts the watcher; nil (and the gate runs unwatched, as
// before) when it cannot, which costs only the grandchildren's cleanup.
func startDeathWatch() *deathWatch {
	r, w, err := os.Pipe()
	if err != nil {
		return nil
	}
	cmd := exec.Command("/bin/sh", "-c", watcherScript)
	cmd.Stdin = r
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil
	}
	r.Close() // the watcher holds the read end; only this process the write end
	return &deathWatch{cmd: cmd, w: w}
}

// watch hands the watcher the gate's process group.
func (d *deathWatch) watch(pgid int) {
	if d == nil {
		return
	}
	if _, err := fmt.Fprintf(d.w, "%d\n", pgid); err != nil {
		d.stop()
	}
}

// stop ends the watcher without it signalling anything: the gate is over
// and Run has killed what was left of its group itself.
func (d *deathWatch) stop() {
	if d == nil || d.cmd == nil {
		return
	}
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	d.w.Close()
	d.cmd = nil
}

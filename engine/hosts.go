package engine

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/host"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// SessionHosts is the coordinator's hold on the session hosts l starts:
// it takes up the sessions a dead engine left running, and stops the rest.
func SessionHosts(l host.Launcher) coord.Hosts { return sessionHosts{l} }

type sessionHosts struct{ l host.Launcher }

// adoptWait bounds the dial of one host at start-up.
const adoptWait = 5 * time.Second

func (h sessionHosts) Adopt(ctx context.Context, s store.Session, p worker.Params) (worker.Handle, coord.Adoption, error) {
	var a coord.Adoption
	dctx, cancel := context.WithTimeout(ctx, adoptWait)
	defer cancel()
	cl, err := host.Dial(dctx, host.SocketPath(h.l.Root, s.ID), h.l.Version)
	if err != nil {
		if host.NotServing(err) {
			return nil, a, nil // no host: the task is requeued as before
		}
		return nil, a, err
	}
	w := cl.Welcome()
	if w.Session != s.ID {
		cl.Detach()
		return nil, a, fmt.Errorf("the host at its socket serves session %s", w.Session)
	}
	a.HostPid = w.HostPid
	a.Typed, a.TypedKnown = w.Inputs, w.InputsKnown
	if e, _ := cl.Exit(); e != nil {
		a.Exited, a.Code, a.At = true, e.Code, e.At
	}
	r, err := worker.Adopt(ctx, p, cl, worker.Adopted{LaunchedAt: s.StartedAt, Brief: s.Brief})
	if err != nil {
		cl.Detach()
		return nil, a, err
	}
	return r, a, nil
}

// Sweep stops the hosts nobody took up and says, in the engine's log,
// what became of each.
func (h sessionHosts) Sweep(ctx context.Context, live func(string) bool) {
	lg := log.New(os.Stderr, "engine: ", log.LstdFlags)
	for _, line := range host.StopAll(ctx, h.l.Root, h.l.Version, 2*time.Second, live) {
		lg.Printf("host sweep: %s", line)
	}
}

// OpenWithHosts opens a repository's coordinator whose sessions run in
// session hosts of the binary self: the background engine's.
func OpenWithHosts(self, version string) func(dir string) (*coord.Opened, error) {
	return func(dir string) (*coord.Opened, error) {
		l := host.Launcher{Self: self, Root: dir, Version: version}
		return coord.Open(coord.OpenParams{Dir: dir, Start: l.Starter(), Hosts: SessionHosts(l)})
	}
}

package coord

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/orchestra-tui/orchestra-tui/config"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/store"
	"github.com/orchestra-tui/orchestra-tui/worker"
)

// OpenParams says where and how to open a coordinator for a repository.
type OpenParams struct {
	Dir         string // any directory inside the repository
	Vars        map[string]string
	Environ     []string
	Now         func() time.Time
	Control     bool // serve the control socket
	Settle      time.Duration
	SampleEvery time.Duration
	// Start, if set, starts sessions (coord.Params.Start); nil runs them
	// in this process. The background engine starts them in session hosts.
	Start worker.Starter
	// Hosts, if set, takes up the sessions a dead predecessor left in
	// session hosts (coord.Params.Hosts).
	Hosts Hosts
	// Tweak, if set, adjusts the loaded configuration (the demo shortens
	// leases this way).
	Tweak func(*config.Config)
}

// Opened is a coordinator with the repository, configuration and store it
// was opened on.
type Opened struct {
	*Coordinator
	Repo   *repo.Repo
	Config config.Config
	Store  store.Store
}

// Close closes the store. Stop the coordinator first.
func (o *Opened) Close() error { return o.Store.Close() }

// Open finds the repository around p.Dir, loads orchestra.toml, opens (or
// creates) the store under .orchestra/ and builds a coordinator on them.
func Open(p OpenParams) (*Opened, error) {
	r, err := repo.Open(p.Dir)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(r.Root)
	if err != nil {
		return nil, err
	}
	if p.Tweak != nil {
		p.Tweak(&cfg)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find own executable: %w", err)
	}
	vars := map[string]string{"self": self, "script": ""}
	for k, v := range p.Vars {
		vars[k] = v
	}
	st, _, err := OpenStore(context.Background(), r.Root, cfg)
	if err != nil {
		return nil, err
	}
	control := ""
	if p.Control {
		control = ControlPath(r.Root)
	}
	c, err := New(Params{
		Store: st, Repo: r, Config: cfg, Vars: vars, Environ: p.Environ, Now: p.Now,
		Control: control, Settle: p.Settle, SampleEvery: p.SampleEvery, Start: p.Start, Hosts: p.Hosts,
	})
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	return &Opened{Coordinator: c, Repo: r, Config: cfg, Store: st}, nil
}

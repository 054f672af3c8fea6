// Package config reads orchestra.toml at the repository root. Every setting
// has a default, so a repository with no config file works.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/orchestra-tui/orchestra-tui/jail"
	"github.com/orchestra-tui/orchestra-tui/lease"
	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// FileName is the config file's name at the repository root.
const FileName = "orchestra.toml"

// Duration is the TOML-friendly duration shared with harness specs.
type Duration = session.Duration

// Config is the whole of orchestra.toml.
type Config struct {
	// Harness holds agent CLI specs by name; the built-in ones (scripted,
	// claude, shell) are present unless overridden.
	Harness map[string]session.Spec `toml:"harness"`
	Lease   Lease                   `toml:"lease"`
	Stuck   Stuck                   `toml:"stuck"`
	Verify  Verify                  `toml:"verify"`
	Pane    Pane                    `toml:"pane"`
	Brief   Brief                   `toml:"brief"`
	// Slots are the worker slots. With none configured there is one slot
	// per harness with the harness's capacity (default 1).
	Slots []Slot `toml:"slots"`
	// Prices are per-model prices in US dollars per million tokens,
	// over the built-in ones (DefaultPrices).
	Prices map[string]Price `toml:"prices"`
	// Budget bounds what a task and a day may spend.
	Budget Budget `toml:"budget"`
	// Fork configures trained bases and the forks started from them.
	Fork Fork `toml:"fork"`
	// Finalise says what happens to an approved task's branch.
	Finalise Finalise `toml:"finalise"`
	// Limits bounds what operators and agents can make the console hold.
	Limits Limits `toml:"limits"`
	// Store says where task state lives.
	Store Store `toml:"store"`
	// Notify says how the operator hears that a task needs them.
	Notify Notify `toml:"notify"`
	// Fleet configures an engine that shares a PostgreSQL store with
	// engines on other machines.
	Fleet Fleet `toml:"fleet"`
	// Console says how the console draws on the operator's terminal.
	Console Console `toml:"console"`
	// Source is the forge and repository of issues and pull requests.
	Source Source `toml:"source"`

	// fromFile names the harnesses orchestra.toml defines or changes.
	fromFile map[string]bool
}

// HarnessSource says where harness name comes from: "built in",
// "orchestra.toml", or "built in, changed in orchestra.toml".
func (c Config) HarnessSource(name string) string {
	_, builtin := session.DefaultSpecs()[name]
	switch {
	case builtin && c.fromFile[name]:
		return "built in, changed in " + FileName
	case builtin:
		return "built in"
	default:
		return FileName
	}
}

// Notify says how the operator hears that a task needs a human (awaits
// review, is stuck, was refused, failed).
type Notify struct {
	// Bell rings the terminal bell in the console.
	Bell bool `toml:"bell"`
	// Desktop sends a desktop notification through the terminal (OSC 9
	// and OSC 777). The console's --no-anim turns off both.
	Desktop bool `toml:"desktop"`
	// Command, if set, is run by the engine for every such event with the
	// event as JSON on its standard input and in $ORCHESTRA_NOTICE,
	// e.g. ["notify-send", "orchestra-tui", "a task needs you"].
	Command []string `toml:"command"`
}

// Store says where task state lives: the SQLite file under .orchestra/ by
// default, or a PostgreSQL database that engines on several machines share.
type Store struct {
	// URL is a postgres:// connection URL; empty means the embedded SQLite
	// store. The environment variable ORCHESTRA_STORE_URL, when set, takes
	// its place, so a password need not be written into the repository.
	URL string `toml:"url"`
	// Timeout bounds every store call that has no deadline of its own: a
	// PostgreSQL connection whose bytes a network drops fails the call
	// after it (an outage the engine weathers) instead of hanging it.
	Timeout Duration `toml:"timeout"`
}

// Fleet configures an engine that shares one queue (a PostgreSQL store)
// with engines on other machines.
type Fleet struct {
	// Host names this machine in the engines table and beside every task
	// it runs; empty means its hostname.
	Host string `toml:"host"`
	// Remote is the git remote each sealed phase's commit is pushed to and
	// a taken-over task's branch is fetched from; empty means task branches
	// stay in this clone (one machine).
	Remote string `toml:"remote"`
	// SSH is the ssh destination ([user@]host) at which the other engines
	// reach this machine, to draw the panes of its sessions in consoles
	// attached to them; empty means its hostname.
	SSH string `toml:"ssh"`
	// Heartbeat is how often the engine records that it is alive.
	Heartbeat Duration `toml:"heartbeat"`
	// TTL is how old an engine's heartbeat may grow before the other
	// engines take its tasks over.
	TTL Duration `toml:"ttl"`
	// Key is the path of the fleet key that signs every task (package
	// sign): the same file, mode 0600, on every machine of the fleet, and
	// never in the store. Empty means orchestra-tui/fleet.key in the
	// user's configuration directory, created on first use.
	Key string `toml:"key"`
}

// Finalise configures the end of the loop: merging an approved task's
// branch and publishing it.
type Finalise struct {
	// Merge is how `orchestra-tui merge` (and the console's merge key)
	// brings the branch into the checked-out branch: "ff" (fast-forward
	// when possible, else a merge commit), "ff-only" or "no-ff".
	Merge string `toml:"merge"`
	// Push, when set, pushes the branch to Remote on approve and, where
	// the GitHub CLI (gh) is installed, opens a pull request.
	Push   bool   `toml:"push"`
	Remote string `toml:"remote"`
	// PR, when set, makes approve push the branch to Remote and open a
	// pull request on the [source] forge; the task completes when it is
	// merged there (coord/pullrequest.go).
	PR bool `toml:"pr"`

	// Queue, when set, makes approve (and merge) hand the task to the
	// merge queue: it integrates one task at a time onto Base in a
	// scratch worktree, re-runs the task's verify command there and moves
	// Base only when that is green.
	Queue bool `toml:"queue"`
	// Integrate is how the queue brings a branch onto the base: "merge"
	// (as Merge says) or "rebase".
	Integrate string `toml:"integrate"`
	// Base is the branch the queue lands work on; empty means the branch
	// checked out in the main checkout when the queue takes the task.
	Base string `toml:"base"`
}

// Fork configures the keep-warm / let-expire / retrain policy of trained
// bases (package fork).
type Fork struct {
	// CacheLifetime is how long the model service keeps a conversation's
	// prompt cache after its last read: 5 minutes by default, 1 hour on
	// plans that offer it. A fork that reads the cache resets the clock.
	CacheLifetime Duration `toml:"cache_lifetime"`
	// ExpectedGap is how long after a base's last use the next fork is
	// expected; the policy weighs keep-warm pings over that gap against a
	// retrain.
	ExpectedGap Duration `toml:"expected_gap"`
	// PingLead is how long before the cache expires a keep-warm ping is
	// sent, so a slow ping still lands while the cache is warm.
	PingLead Duration `toml:"ping_lead"`
}

// Lease configures the lease policy and the attempt limit.
type Lease struct {
	Length      Duration `toml:"length"`
	Window      Duration `toml:"window"`
	MaxRenewals int      `toml:"max_renewals"`
	MaxAttempts int      `toml:"max_attempts"` // attempts of one phase before the task fails
	Tick        Duration `toml:"tick"`         // how often leases are evaluated
}

// Stuck configures stuck-pane detection.
type Stuck struct {
	After        Duration `toml:"after"`         // screen unchanged this long while the phase is unfinished
	AutoResubmit int      `toml:"auto_resubmit"` // automatic resubmits before giving up; 0 = off
}

// Verify configures the verify gate.
type Verify struct {
	Timeout Duration `toml:"timeout"`
}

// Pane is the size a session's terminal starts at.
type Pane struct {
	Cols int `toml:"cols"`
	Rows int `toml:"rows"`
	// History is how many lines that scrolled off a pane's top it keeps
	// for scroll mode (the recording keeps everything anyway); 0 keeps none.
	History int `toml:"history"`
	// Size says whose size a pane's pty takes when several consoles show
	// it, as tmux's window-size: "latest" (the console that last typed
	// into or focused it), "smallest" or "largest".
	Size string `toml:"size"`
}

// Brief configures brief rendering.
type Brief struct {
	Budget int `toml:"budget"` // bytes; 0 = the renderer's default
}

// Slot is one worker slot: which harness it runs and how many at once.
type Slot struct {
	Name         string   `toml:"name"`
	Harness      string   `toml:"harness"`
	Capacity     int      `toml:"capacity"`
	Capabilities []string `toml:"capabilities"`
}

// Price is a model's price per million tokens of each column. It lives in
// the contracts package (task) with the usage totals it prices.
type Price = task.Price

// Default returns the configuration a repository without orchestra.toml gets.
func Default() Config {
	return Config{
		Harness: session.DefaultSpecs(),
		Lease: Lease{
			Length:      Duration{Duration: 20 * time.Minute},
			Window:      Duration{Duration: 5 * time.Minute},
			MaxRenewals: 12,
			MaxAttempts: 3,
			Tick:        Duration{Duration: time.Second},
		},
		Stuck:  Stuck{After: Duration{Duration: 2 * time.Minute}},
		Verify: Verify{Timeout: Duration{Duration: 10 * time.Minute}},
		Pane:   Pane{Cols: 120, Rows: 40, History: 10000, Size: "latest"},
		Prices: DefaultPrices(),
		Fork: Fork{
			CacheLifetime: Duration{Duration: 5 * time.Minute},
			ExpectedGap:   Duration{Duration: 15 * time.Minute},
			PingLead:      Duration{Duration: 30 * time.Second},
		},
		Finalise: Finalise{Merge: "ff", Remote: "origin", Integrate: "merge"},
		Notify:   Notify{Bell: true, Desktop: true},
		Fleet:    Fleet{Heartbeat: Duration{Duration: 10 * time.Second}, TTL: Duration{Duration: 30 * time.Second}},
		Store:    Store{Timeout: Duration{Duration: 10 * time.Second}}, // store.DefaultCallTimeout
		Limits:   DefaultLimits(),
		Console:  Console{Colors: "auto"},
	}
}

// Load reads orchestra.toml from root, layered over Default. A missing file
// is not an error. Unknown keys are: a typo must not silently do nothing.
// MaxBytes bounds orchestra.toml: a config is a page of settings.
const MaxBytes = 1 << 20

func Load(root string) (Config, error) {
	path := filepath.Join(root, FileName)
	data, err := jail.ReadRegular(path, MaxBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("read %s: %w", path, err)
	}
	return Parse(path, string(data))
}

// Parse decodes config text layered over Default; name is used in errors.
func Parse(name, text string) (Config, error) {
	cfg := Default()
	builtin := cfg.Harness
	cfg.Harness = nil
	md, err := toml.Decode(text, &cfg)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", name, err)
	}
	if undecoded := md.Undecoded(); len(undecoded) > 0 {
		keys := make([]string, len(undecoded))
		for i, k := range undecoded {
			keys[i] = k.String()
		}
		return Config{}, fmt.Errorf("%s: unknown keys: %s", name, strings.Join(keys, ", "))
	}
	merged := builtin
	for n, s := range cfg.Harness {
		if cfg.fromFile == nil {
			cfg.fromFile = map[string]bool{}
		}
		cfg.fromFile[n] = true
		if base, ok := builtin[n]; ok {
			s = overlay(base, s)
		} else if s.Delivery == "" {
			// Most agent CLIs take their prompt typed at a prompt, so a
			// new harness needs only argv and ready.
			s.Delivery = session.DeliveryType
		}
		s.Name = n
		merged[n] = s
	}
	cfg.Harness = merged
	return cfg, cfg.Validate(name)
}

// overlay fills the zero fields of s from base, so a config can change one
// field of a built-in harness without restating the rest.
func overlay(base, s session.Spec) session.Spec {
	if len(s.Argv) == 0 {
		s.Argv = base.Argv
	}
	if s.Env == nil {
		s.Env = base.Env
	}
	if s.SetEnv == nil {
		s.SetEnv = base.SetEnv
	}
	if s.Delivery == "" {
		s.Delivery = base.Delivery
	}
	if s.Ready == "" {
		s.Ready = base.Ready
	}
	if s.Submit == "" {
		s.Submit = base.Submit
	}
	if s.Tested == nil {
		s.Tested = base.Tested
	}
	if s.Pending == "" {
		s.Pending = base.Pending
	}
	if s.Queued == "" {
		s.Queued = base.Queued
	}
	if s.SubmitRetries == 0 {
		s.SubmitRetries = base.SubmitRetries
	}
	if s.Quiet.Duration == 0 {
		s.Quiet = base.Quiet
	}
	if s.LaunchTimeout.Duration == 0 {
		s.LaunchTimeout = base.LaunchTimeout
	}
	if s.OwnGrace.Duration == 0 {
		s.OwnGrace = base.OwnGrace
	}
	if s.Resubmit == "" {
		s.Resubmit = base.Resubmit
	}
	if s.Volatile == nil {
		s.Volatile = base.Volatile
	}
	if s.Dialogs == nil {
		s.Dialogs = base.Dialogs
	}
	if s.Capabilities == nil {
		s.Capabilities = base.Capabilities
	}
	if s.Capacity == 0 {
		s.Capacity = base.Capacity
	}
	if s.Trust == "" {
		s.Trust = base.Trust
	}
	if s.Usage == "" {
		s.Usage = base.Usage // else an argv override stops counting usage and forking
	}
	return s
}

// Validate checks the configuration and names the offending key.
func (c Config) Validate(name string) error {
	var errs []error
	names := make([]string, 0, len(c.Harness))
	for n := range c.Harness {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		// One line per problem, each naming the file (Spec.Validate
		// names the harness and the field).
		err := c.Harness[n].Validate()
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				errs = append(errs, fmt.Errorf("%s: %w", name, e))
			}
		} else if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	if c.Lease.Length.Duration <= 0 {
		errs = append(errs, fmt.Errorf("%s: lease.length must be positive", name))
	}
	if c.Lease.Window.Duration < 0 || c.Lease.Window.Duration > c.Lease.Length.Duration {
		errs = append(errs, fmt.Errorf("%s: lease.window must be between 0 and lease.length", name))
	}
	if c.Verify.Timeout.Duration <= 0 {
		// The gate runs with no session and no lease clock: only this
		// timeout ends a test suite that hangs.
		errs = append(errs, fmt.Errorf("%s: verify.timeout must be positive (a hung test suite would hold its task for ever)", name))
	}
	if c.Lease.MaxAttempts < 1 {
		errs = append(errs, fmt.Errorf("%s: lease.max_attempts must be at least 1", name))
	}
	if c.Fork.CacheLifetime.Duration <= 0 {
		errs = append(errs, fmt.Errorf("%s: fork.cache_lifetime must be positive", name))
	}
	if c.Fork.PingLead.Duration < 0 || c.Fork.PingLead.Duration >= c.Fork.CacheLifetime.Duration {
		errs = append(errs, fmt.Errorf("%s: fork.ping_lead must be at least 0 and shorter than fork.cache_lifetime", name))
	}
	if c.Fork.ExpectedGap.Duration < 0 {
		errs = append(errs, fmt.Errorf("%s: fork.expected_gap must not be negative", name))
	}
	switch c.Finalise.Merge {
	case "ff", "ff-only", "no-ff":
	default:
		errs = append(errs, fmt.Errorf("%s: finalise.merge is %q; want \"ff\", \"ff-only\" or \"no-ff\"", name, c.Finalise.Merge))
	}
	switch c.Finalise.Integrate {
	case "merge", "rebase":
	default:
		errs = append(errs, fmt.Errorf("%s: finalise.integrate is %q; want \"merge\" or \"rebase\"", name, c.Finalise.Integrate))
	}
	if strings.HasPrefix(c.Finalise.Base, "-") || strings.ContainsAny(c.Finalise.Base, " \t") {
		errs = append(errs, fmt.Errorf("%s: finalise.base must name a branch (or be left out for the checked-out one)", name))
	}
	if strings.TrimSpace(c.Finalise.Remote) == "" || strings.HasPrefix(c.Finalise.Remote, "-") {
		errs = append(errs, fmt.Errorf("%s: finalise.remote must name a git remote (default \"origin\")", name))
	}
	errs = append(errs, c.rangeErrors(name)...)
	switch c.Pane.Size {
	case "latest", "smallest", "largest":
	default:
		errs = append(errs, fmt.Errorf("%s: pane.size is %q; want \"latest\", \"smallest\" or \"largest\"", name, c.Pane.Size))
	}
	if err := c.Console.validate(name); err != nil {
		errs = append(errs, err)
	}
	errs = append(errs, c.Source.errors(name)...)
	errs = append(errs, c.Budget.errors(name)...)
	if c.Finalise.PR && !c.Source.Configured() {
		errs = append(errs, fmt.Errorf("%s: finalise.pr opens pull requests on the [source] forge; set source.forge and source.repo", name))
	}
	if u := c.Store.URL; u != "" && !strings.HasPrefix(u, "postgres://") && !strings.HasPrefix(u, "postgresql://") {
		// Never echo the value: it may hold a password.
		errs = append(errs, fmt.Errorf("%s: store.url must be a postgres:// URL (leave it out for the SQLite store under .orchestra/)", name))
	}
	if c.Store.Timeout.Duration <= 0 {
		errs = append(errs, fmt.Errorf("%s: store.timeout must be positive", name))
	}
	if c.Fleet.Heartbeat.Duration <= 0 || c.Fleet.TTL.Duration < 2*c.Fleet.Heartbeat.Duration {
		errs = append(errs, fmt.Errorf("%s: fleet.heartbeat must be positive and fleet.ttl at least twice as long (one missed beat must not cost an engine its tasks)", name))
	}
	if strings.HasPrefix(c.Fleet.SSH, "-") || strings.ContainsAny(c.Fleet.SSH, " \t\n") {
		errs = append(errs, fmt.Errorf("%s: fleet.ssh must be an ssh destination, [user@]host", name))
	}
	if strings.HasPrefix(c.Fleet.Remote, "-") {
		errs = append(errs, fmt.Errorf("%s: fleet.remote must name a git remote", name))
	}
	for i, s := range c.Slots {
		if _, ok := c.Harness[s.Harness]; !ok {
			errs = append(errs, fmt.Errorf("%s: slots[%d] (%s): unknown harness %q", name, i, s.Name, s.Harness))
		}
	}
	return errors.Join(errs...)
}

// Policy returns the lease policy the config describes.
func (c Config) Policy() lease.Policy {
	return lease.Policy{Length: c.Lease.Length.Duration, Window: c.Lease.Window.Duration, MaxRenewals: c.Lease.MaxRenewals}
}

// EffectiveSlots returns the configured slots, or one slot per harness with
// its capacity (at least 1) when none are configured, sorted by name.
func (c Config) EffectiveSlots() []Slot {
	if len(c.Slots) > 0 {
		out := append([]Slot(nil), c.Slots...)
		for i := range out {
			if out[i].Capacity < 1 {
				out[i].Capacity = 1
			}
			if out[i].Name == "" {
				out[i].Name = out[i].Harness
			}
		}
		return out
	}
	var out []Slot
	for n, h := range c.Harness {
		capacity := h.Capacity
		if capacity < 1 {
			capacity = 1
		}
		out = append(out, Slot{Name: n, Harness: n, Capacity: capacity, Capabilities: h.Capabilities})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

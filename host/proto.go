// Package host runs one agent session in a process of its own, so the agent
// outlives the engine that started it: the session host (modelled on
// nomad's task executor, dtach and abduco) owns the pty master, the process
// group, the asciicast recording and the terminal emulator, and serves them
// on its own unix socket. The engine talks to it through a Client, which
// offers what the worker needs of a session; an engine that restarts after
// a crash dials the host again and re-adopts the session.
//
//	engine ── Client ── unix socket ── host ── pty ── agent
//	                  (.orchestra/hosts/<session>.sock)
//
// A host's life:
//
//	Spawn ──► serving ──agent exits──► exited (status and time kept)
//	             │                          │
//	             │      an engine collects ──┴──► gone (socket removed)
//	             └── stop: the agent's whole tree ends ──► exited
//
// The protocol is the engine's style (package wire): newline-delimited
// JSON, a hello naming the protocol version answered by a welcome (the
// session, the agent's pid, its exit if it has ended) or a refusal, then
// requests with ids (the screen, keys, the tree's CPU time, a trust, a
// stop). A client that watches gets a "changed" push, carrying the
// screen's version, whenever the screen changes (coalesced: one pending
// per client), and an "exit" push when the agent has exited and its tree
// is torn down.
//
// The host is a dead-man switch for an engine on a shared store
// (deadman.go): that engine trusts each host, after every heartbeat that
// landed, for what is left of its own trust window, and a host whose trust
// runs out with no newer one freezes its agent's process group (SIGSTOP)
// and says so in the pane, so an engine that is stopped itself while its
// hosts run on never leaves an agent at work beside the one of the engine
// that takes its task over. A newer trust thaws it (SIGCONT); a host never
// trusted (a lone engine's) never freezes.
package host

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
	"github.com/orchestra-tui/orchestra-tui/vt"
	"github.com/orchestra-tui/orchestra-tui/wire"
)

// ProtocolVersion is the version of the host protocol. Bump it on any
// change a peer of the previous version would misread.
const ProtocolVersion = 1

// Requests a client sends.
const (
	opHello      = wire.OpHello
	opWatch      = "watch"      // {rows}: push changed and exit from now on
	opScreen     = "screen"     // -> screen
	opScrollback = "scrollback" // {n} -> []string
	opWrite      = "write"      // {data}: raw keys
	opPaste      = "paste"      // {text}
	opNotice     = "notice"     // {text}: a line shown in the pane, sent to nobody
	opResize     = "resize"     // {cols, rows}
	opWaitReady  = "wait-ready" // -> ok once the launch is confirmed, or a refusal
	opDeliver    = "deliver"    // {text, key}: session.DeliverChecked
	opSend       = "send"       // {text, key}: session.SendChecked
	opSubmit     = "submit"     // session.SubmitChecked
	opStop       = "stop"       // {grace}: end the agent's whole tree
	opCollect    = "collect"    // the exit was seen: the host may go
	// opCPU -> cpu: the CPU time the agent's tree has used. A host older
	// than it answers "unknown request", which the client takes as a
	// tree whose CPU is not known: nothing is misread, so the protocol's
	// version stays.
	opCPU = "cpu"
	// opTrust {for_ms, until_mono_ns}: the dead-man switch. The agent may
	// run for that long from the host's receipt, by the host's monotonic
	// clock, and no later than until_mono_ns (trustReq); once it
	// passes with no newer trust, the host freezes the agent's process
	// group (SIGSTOP) itself, and a newer trust thaws it (SIGCONT). A host
	// that never received one never freezes. A host older than it answers
	// "unknown request", which the client takes as a host without the
	// switch (not asked again): nothing is misread, so the protocol's
	// version stays.
	opTrust = "trust"
)

// Replies and pushes the host sends.
const (
	opWelcome = wire.OpWelcome
	opRefused = wire.OpRefused
	opOK      = wire.OpOK
	opError   = wire.OpError
	opChanged = "changed" // push: {version}, or rowsReply when watching with rows
	opExit    = "exit"    // push: exitInfo
)

type hello struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	Client   string `json:"client"`
}

// Welcome is what a host says about itself to a client it accepts.
type Welcome struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	// HostPid is the host process; Pid the agent (its process group).
	HostPid   int       `json:"host_pid"`
	Pid       int       `json:"pid"`
	Task      string    `json:"task"`
	Session   string    `json:"session"`
	Cols      int       `json:"cols"`
	Rows      int       `json:"rows"`
	StartedAt time.Time `json:"started_at"`
	// Exit is set once the agent has exited.
	Exit *Exit `json:"exit,omitempty"`
	// Inputs are the keys of the keyed inputs this host began to type,
	// in order; InputsKnown says the host keeps them (an older host
	// does not, and its silence is no evidence).
	Inputs      []string `json:"inputs,omitempty"`
	InputsKnown bool     `json:"inputs_known,omitempty"`
	// PushRows says the host pushes the changed rows with each change
	// notice to a client that watches with watchReq.Rows. An older host
	// does not say it; its client asks for rows after each notice.
	PushRows bool `json:"push_rows,omitempty"`
}

// Exit is how the agent ended.
type Exit struct {
	Code int       `json:"code"`
	At   time.Time `json:"at"`
	// Remain names processes of its tree that outlived SIGKILL.
	Remain []int `json:"remain,omitempty"`
}

type screen struct {
	Version uint64   `json:"version"`
	Cols    int      `json:"cols"`
	Rows    int      `json:"rows"`
	Render  string   `json:"render"`
	Text    string   `json:"text"`
	X       int      `json:"x"`
	Y       int      `json:"y"`
	Cursor  bool     `json:"cursor"`
	Title   string   `json:"title,omitempty"`
	Modes   vt.Modes `json:"modes"`
}

// cpu is the agent's tree's CPU time so far (session.Session.CPU), in
// nanoseconds; Known is false where it cannot be measured.
type cpu struct {
	CPU   time.Duration `json:"cpu"`
	Known bool          `json:"known"`
}

// trustReq is a trust: how long the agent may run from its receipt, and
// (when set) the deadline itself by the machine's CLOCK_MONOTONIC, which
// the engine and its hosts share: the host keeps the earlier of the two,
// so a trust that was held up on its way (its engine stopped between
// reckoning it and writing it) is worth only what was left of it, and one
// that comes too late thaws nothing.
type trustReq struct {
	ForMS       int64 `json:"for_ms"`
	UntilMonoNS int64 `json:"until_mono_ns,omitempty"`
}

// monoNow is the machine's CLOCK_MONOTONIC, in nanoseconds.
func monoNow() int64 {
	var ts unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts) != nil {
		return 0
	}
	return ts.Nano()
}

type changed struct {
	Version uint64 `json:"version"`
}

type textReq struct {
	Text string `json:"text"`
	// Key names an input the engine must not type twice (a decision's
	// id): the host remembers it once it begins to type it.
	Key string `json:"key,omitempty"`
}

type writeReq struct {
	Data []byte `json:"data"`
}

type sizeReq struct {
	Cols int `json:"cols"`
	Rows int `json:"rows"`
}

type nReq struct {
	N int `json:"n"`
}

type stopReq struct {
	Grace time.Duration `json:"grace"`
}

// errBody carries an error's structure, so a refusal or a list of pids that
// survived a stop reaches the engine as the same error type.
type errBody struct {
	Reason task.Reason `json:"reason,omitempty"`
	Detail string      `json:"detail,omitempty"`
	What   string      `json:"what,omitempty"`
	Remain []int       `json:"remain,omitempty"`
}

func encodeErr(err error) (string, json.RawMessage) {
	var b errBody
	var ref *task.Refusal
	var rem *session.RemainError
	switch {
	case errors.As(err, &ref):
		b.Reason, b.Detail = ref.Reason, ref.Detail
	case errors.As(err, &rem):
		b.What, b.Remain = rem.What, rem.Pids
	default:
		return err.Error(), nil
	}
	raw, _ := json.Marshal(b)
	return err.Error(), raw
}

func decodeErr(msg string, body json.RawMessage) error {
	var b errBody
	if len(body) > 0 && json.Unmarshal(body, &b) == nil {
		switch {
		case b.Reason != "":
			return &task.Refusal{Reason: b.Reason, Detail: b.Detail}
		case len(b.Remain) > 0:
			return &session.RemainError{What: b.What, Pids: b.Remain}
		}
	}
	return errors.New(msg)
}

// VersionError is a handshake between two protocol versions: a host
// started by another version of the binary.
type VersionError struct {
	Client, Host int
	HostVersion  string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("the session host (%s) speaks host protocol %d and this engine speaks %d; its agent is left running: stop it with `orchestra-tui stop`", e.HostVersion, e.Host, e.Client)
}

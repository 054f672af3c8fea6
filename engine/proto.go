// Package engine runs the coordinator as a process of its own and serves it
// to consoles and the CLI over a unix socket, so agents outlive the console.
//
// The protocol is package wire's newline-delimited JSON over any byte
// stream (a unix socket; `ssh host orchestra-tui attach --stdio`): the
// client sends a hello naming its protocol version, the engine answers
// welcome or refused,
// then requests and replies carry ids while the engine pushes snapshots,
// events and pane screens to a client that asked to watch.
//
//	console ──┐                                  ┌── session ── agent (pty)
//	console ──┼── unix socket ── engine ─────────┼── session ── agent (pty)
//	CLI     ──┘   (versioned)    coord, leases,  └── session ── agent (pty)
//	                             verify, store
package engine

import (
	"fmt"

	"github.com/orchestra-tui/orchestra-tui/wire"
)

// ProtocolVersion is the version of the wire protocol. Bump it on any
// change a peer of the previous version would misread; the handshake then
// tells the operator what to do instead of failing in the middle.
//
// 2: panes carry their rows cut to the pty's width (lines), not one
// rendered screen; tasks with nothing live come as summaries.
// 3: a snapshot carries the summaries as rows of text (wireSnap).
// 4: a summary row ends with the task's pull request.
// 5: a summary row ends with why its usage is a lower bound; a snapshot
// carries [budget] and the day's spend.
// 6: a summary row ends with why a silent session is working and when the
// provider's limit it waits for resets.
const ProtocolVersion = 6

// Requests a client sends.
const (
	opHello      = wire.OpHello
	opWatch      = "watch"
	opSnapshot   = "snapshot"
	opDetail     = "detail"
	opDo         = "do"
	opInput      = "input"
	opResize     = "resize"
	opScrollback = "scrollback"
	opStop       = "stop"
	// opRecording asks for a session's recording and its ledger marks
	// (coord.Recording); an engine that predates it answers "unknown
	// request", which needs no new protocol version.
	opRecording = "recording"
)

// Replies and pushes the engine sends.
const (
	opWelcome = wire.OpWelcome
	opRefused = wire.OpRefused
	opOK      = wire.OpOK
	opError   = wire.OpError
	opSnap    = "snap"   // push: the current snapshot
	opEvent   = "event"  // push: one ledger event
	opPane    = "pane"   // push: the newest screen of one pane
	opBehind  = "behind" // push: this console fell behind; reread from the ledger
	opReady   = "ready"  // push: the first snapshot and every live pane were sent
	opBye     = "bye"    // push: the engine is stopping
)

// hello is the client's first message.
type hello struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"` // the binary's version, for messages
	Client   string `json:"client"`  // "console", "cli"
}

// welcome is the engine's answer to a hello it accepts.
type welcome struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	Pid      int    `json:"pid"`
	Root     string `json:"root"`
}

// VersionError is a handshake between two protocol versions.
type VersionError struct {
	Client, Engine               int
	ClientVersion, EngineVersion string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("this orchestra-tui (%s) speaks engine protocol %d but the running engine (%s) speaks protocol %d; run `orchestra-tui stop` (agents stop, their tasks requeue without losing an attempt) and start again to run this version's engine",
		e.ClientVersion, e.Client, e.EngineVersion, e.Engine)
}

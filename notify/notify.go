// Package notify decides which ledger events mean a task needs a human, and
// tells the operator: the terminal bell and a desktop notification from the
// console (OSC 9 and OSC 777), and the configured `[notify] command`, run by
// the engine with the event as JSON, for an operator away from the screen.
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// Why a task needs a human; the Notice's Kind.
const (
	KindAwaitingReview = "awaiting-review" // its work is green and waits for approval
	KindStuck          = "stuck"           // its pane stopped changing mid-phase
	KindRefused        = "refused"         // the engine refused something only a human can fix
	KindFailed         = "failed"          // it used its attempts; only a human can retry it
	KindReturned       = "returned"        // the merge queue sent it back to implement (a conflict, or red on the base)
	KindBudget         = "budget"          // a task spent its budget (parked), or the day's budget stopped placement
	KindLimited        = "limited"         // its agent's provider showed a usage limit; it waits for the reset
)

// Notice is one "a task needs you", as the command receives it (JSON on
// its standard input and in $ORCHESTRA_NOTICE).
type Notice struct {
	Kind      string    `json:"kind"`
	TaskID    task.ID   `json:"task_id"`
	Title     string    `json:"title,omitempty"`
	Text      string    `json:"text"`
	Reason    string    `json:"reason,omitempty"`
	Event     task.Kind `json:"event"`
	EventID   string    `json:"event_id,omitempty"`
	SessionID string    `json:"session_id,omitempty"`
	At        time.Time `json:"at"`
}

// humanRefusals are the refusals the engine cannot get past by itself.
// Most refusals are routine and resolve themselves (an invalid artifact is
// typed back to the agent, a lease without progress expires and the task
// is relaunched); these wait for the operator.
var humanRefusals = map[task.Reason]bool{
	task.ReasonUnplaceable:     true,
	task.ReasonLaunchFailed:    true,
	task.ReasonWorktreeFailed:  true,
	task.ReasonNotGitRepo:      true,
	task.ReasonNoVerifyCommand: true,
	task.ReasonResubmitCap:     true,
	task.ReasonCommitFailed:    true,
	task.ReasonMergeConflict:   true,
	task.ReasonMergeRefused:    true,
	task.ReasonPushFailed:      true,
	task.ReasonVerifyError:     true,
}

// For returns the notice an event calls for, if it means a task now needs
// a human: it awaits review, its pane is stuck, it failed, or the engine
// refused something only a human can fix.
func For(ev task.Event) (Notice, bool) {
	n := Notice{TaskID: ev.TaskID, Text: ev.Text, Reason: string(ev.Reason), Event: ev.Kind, EventID: ev.ID, SessionID: ev.SessionID, At: ev.At}
	switch {
	case ev.Kind == task.EvTaskAwaiting:
		n.Kind = KindAwaitingReview
	case ev.Kind == task.EvTaskFailed:
		n.Kind = KindFailed
	case ev.Kind == task.EvMergeReturned:
		n.Kind = KindReturned
	case ev.Kind == task.EvTaskParked && ev.Reason == task.ReasonTaskBudget,
		ev.Kind == task.EvBudgetDayReached:
		n.Kind = KindBudget
	case ev.Kind == task.EvSessionLimited:
		n.Kind = KindLimited
	case ev.Kind == task.EvRefusal && ev.Reason == task.ReasonStuck:
		n.Kind = KindStuck
	case ev.Kind == task.EvRefusal && humanRefusals[ev.Reason]:
		n.Kind = KindRefused
	default:
		return Notice{}, false
	}
	return n, true
}

// Headline is the notice in a few words, for a desktop notification.
func (n Notice) Headline() string {
	what := map[string]string{
		KindAwaitingReview: "awaits review",
		KindStuck:          "is stuck",
		KindRefused:        "was refused",
		KindFailed:         "failed",
		KindReturned:       "was sent back by the merge queue",
		KindBudget:         "spent its budget and was parked",
		KindLimited:        "waits for its provider's limit to reset",
	}[n.Kind]
	if n.TaskID == "" && n.Kind == KindBudget {
		return "the day's budget is spent: nothing new starts"
	}
	name := n.TaskID.Short()
	if n.Title != "" {
		name += " “" + n.Title + "”"
	}
	return clean("task " + name + " " + what)
}

// Terminal is what the console writes to its terminal for a notice: the
// bell when bell is set, and with desktop set an OSC 9 (iTerm2, WezTerm,
// Windows Terminal, kitty) and an OSC 777 (rxvt, foot, Ghostty, VTE)
// notification. Terminals ignore the OSC they do not know.
func Terminal(n Notice, bell, desktop bool) string {
	var b strings.Builder
	if bell {
		b.WriteByte(ansi.BEL)
	}
	if desktop {
		body := n.Headline()
		if n.Text != "" {
			body += ": " + clean(n.Text)
		}
		b.WriteString(ansi.Notify(body))
		b.WriteString("\x1b]777;notify;orchestra-tui;" + strings.ReplaceAll(body, ";", ",") + "\x07")
	}
	return b.String()
}

// commandTimeout bounds one run of the notify command: a hung notifier
// must not pile up processes.
const commandTimeout = 30 * time.Second

// Run runs the notify command argv with the notice as JSON on its standard
// input and in $ORCHESTRA_NOTICE, in dir, with environ.
func Run(ctx context.Context, argv []string, dir string, environ []string, n Notice) error {
	if len(argv) == 0 {
		return nil
	}
	data, err := json.Marshal(n)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, commandTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(append([]string(nil), environ...), "ORCHESTRA_NOTICE="+string(data))
	cmd.Stdin = bytes.NewReader(append(data, '\n'))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("notify command %s: %w: %s", argv[0], err, strings.TrimSpace(string(out)))
	}
	return nil
}

// clean keeps notification text to one line of printable characters: an
// escape in a task title must not end the OSC early or reach the terminal.
func clean(s string) string {
	// A C1 control is a 7-bit escape in one character (U+009B is ESC [):
	// spelled out, the sequence it starts is stripped whole.
	s = c1.Replace(strings.ToValidUTF8(s, "\uFFFD"))
	s = ansi.Strip(s)
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\n' || r == '\t' || r == '\r':
			return ' '
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			return -1
		}
		return r
	}, s)
}

// c1 spells out C1 controls.
var c1 = strings.NewReplacer(c1Spelled()...)

// c1Spelled maps each C1 control to its 7-bit escape, for a Replacer.
func c1Spelled() []string {
	var out []string
	for r := rune(0x80); r < 0xa0; r++ {
		out = append(out, string(r), "\x1b"+string(rune(r-0x40)))
	}
	return out
}

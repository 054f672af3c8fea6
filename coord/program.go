package coord

import (
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// programRecheck is how long a lookup of a harness's program is trusted:
// a program installed while tasks wait for it is found within this long,
// and a queue of a thousand tasks costs one lookup per harness, not one
// per task and tick.
const programRecheck = 10 * time.Second

// programs caches, per harness, whether its program is installed on this
// machine (session.ProgramMissing). It lives on the coordinator's loop and
// sees the clock, the harnesses and what their argv and lookup need.
type programs struct {
	missing map[string]string    // harness -> the sentence, "" when found
	checked map[string]time.Time // harness -> when it was looked up

	now     func() time.Time
	harness map[string]session.Spec
	vars    map[string]string // harness argv placeholders (Params.Vars)
	environ []string
	root    string // the repository, where a relative program is looked up
}

// FlagProgramMissing starts the flag (TaskView.Flag) of a task that waits
// for its harness's program to be installed; the sentence saying which
// follows it.
const FlagProgramMissing = "Waiting for its program: "

// programMissing returns the sentence saying t's harness's program is not
// installed here, or "". An engine does not lease a task it could only
// launch into "program not found": that is the machine's fault, and a
// task charged an attempt for each launch would fail in a second.
func (p *programs) programMissing(t task.Task) string {
	h := harnessOf(t)
	spec, ok := p.harness[h]
	if !ok {
		return "" // slotFor says that the harness is unknown
	}
	now := p.now()
	if at, ok := p.checked[h]; ok && now.Sub(at) < programRecheck {
		return p.missing[h]
	}
	if p.checked == nil {
		p.missing, p.checked = map[string]string{}, map[string]time.Time{}
	}
	vars := map[string]string{"model": t.Model}
	for k, v := range p.vars {
		vars[k] = v
	}
	why := session.ProgramMissing(spec.Expand(vars), p.environ, p.root)
	p.missing[h], p.checked[h] = why, now
	return why
}

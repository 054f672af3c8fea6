package session

import "time"

// A plain shell for a human to work in. A brief is text for an agent, and a
// shell would run every line of it, so the brief is written to
// .orchestra/brief.md and the pane shows one line pointing at it; nothing
// is ever typed into the shell.
func init() {
	registerBuiltin("shell", Spec{
		Argv:          []string{"/bin/sh"},
		Env:           envWith(),
		SetEnv:        map[string]string{"PS1": "$ "},
		Delivery:      DeliveryFile,
		Ready:         `(?m)[$#] ?$`,
		Submit:        `\r`,
		Quiet:         Duration{200 * time.Millisecond},
		LaunchTimeout: Duration{10 * time.Second},
		Resubmit:      ResubmitSubmit,
	})
}

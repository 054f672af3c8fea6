package session

import "time"

// The scripted demo agent: this binary's own `agent` subcommand.
func init() {
	registerBuiltin("scripted", Spec{
		Argv: []string{"{{self}}", "agent", "--script", "{{script}}"},
		// The demo agent needs no more than this; its tests' lease
		// timings were measured with it.
		Env:           []string{"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"},
		Delivery:      DeliveryType,
		Ready:         `scripted-agent ❯`,
		Submit:        `\r`,
		Quiet:         Duration{150 * time.Millisecond},
		LaunchTimeout: Duration{10 * time.Second},
		Resubmit:      ResubmitSubmit,
	})
}

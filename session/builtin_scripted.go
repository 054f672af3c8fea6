package session

import "time"

// The scripted demo agent: this binary's own `agent` subcommand.
func init() {
	registerBuiltin("scripted", Spec{
		Argv:          []string{"{{self}}", "agent", "--script", "{{script}}"},
		Env:           envWith(),
		Delivery:      DeliveryType,
		Ready:         `scripted-agent ❯`,
		Submit:        `\r`,
		Quiet:         Duration{150 * time.Millisecond},
		LaunchTimeout: Duration{10 * time.Second},
		Resubmit:      ResubmitSubmit,
	})
}

package store

import (
	"encoding/json"

	"github.com/orchestra-tui/orchestra-tui/task"
)

// UsageAddition is one row a driver adds to its running usage sums: one
// model's figures from one session.usage event.
type UsageAddition struct {
	TaskID task.ID
	Phase  task.Phase
	Model  string
	task.ModelTotals
	// LowerBound is the event's mark: why its figures are at least these.
	LowerBound string
}

// UsageAdditions returns what a ledger event adds to the usage sums: a row
// per model of a session.usage event, nothing for any other event or for
// data the store cannot read (the ledger keeps it as written).
func UsageAdditions(e task.Event) []UsageAddition {
	if e.Kind != task.EvUsage || len(e.Data) == 0 {
		return nil
	}
	var d UsageData
	if json.Unmarshal(e.Data, &d) != nil {
		return nil
	}
	out := make([]UsageAddition, 0, len(d.Totals.Models))
	for model, m := range d.Totals.Models {
		out = append(out, UsageAddition{TaskID: e.TaskID, Phase: d.Phase, Model: model, ModelTotals: m, LowerBound: d.LowerBound})
	}
	return out
}

// AppendUsageRow adds one model's sums to out, read in (task, phase, model)
// order: a row of a new task or phase starts a new UsageTotal. A row's
// lower-bound mark marks its phase's total.
func AppendUsageRow(out []UsageTotal, id task.ID, phase task.Phase, model string, m task.ModelTotals, lowerBound string) []UsageTotal {
	if n := len(out); n == 0 || out[n-1].TaskID != id || out[n-1].Phase != phase {
		out = append(out, UsageTotal{TaskID: id, Phase: phase, Totals: task.UsageTotals{Models: map[string]task.ModelTotals{}}})
	}
	last := &out[len(out)-1]
	last.Totals.Models[model] = m
	if lowerBound != "" {
		last.LowerBound = lowerBound
	}
	return out
}

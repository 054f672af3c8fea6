package vt

import (
	"os"
	"testing"
)

// BenchmarkReflow re-wraps a pane whose history is full (10,000 lines of
// the agent stream) to a narrower width and back: the cost of one resize
// of a long-running pane.
func BenchmarkReflow(b *testing.B) {
	data, err := os.ReadFile("testdata/agentstream-256k.bin")
	if err != nil {
		b.Fatal(err)
	}
	term := New(120, 40, DefaultHistory, nil)
	for term.HistoryLen() < DefaultHistory {
		feed(term, data, 4096)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			term.Resize(100, 40)
		} else {
			term.Resize(120, 40)
		}
	}
}

package verify

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkTailWriter measures what the gate spends reading a test run's
// output: go test's plain -v text against the same run as go test -json
// (decoded line by line, its text kept), per MB of output.
func BenchmarkTailWriter(b *testing.B) {
	var text, js strings.Builder
	for i := 0; len(js.String()) < 1<<20; i++ {
		out := fmt.Sprintf("    calc_test.go:%d: checking case %d of the table\n", i%300, i)
		text.WriteString(out)
		fmt.Fprintf(&js, `{"Time":"2026-01-02T03:04:05.123456789Z","Action":"output","Package":"example.com/calc","Test":"TestCase%d","Output":%q}`+"\n", i%50, out)
		if i%20 == 19 {
			text.WriteString(fmt.Sprintf("--- PASS: TestCase%d (0.00s)\n", i))
			fmt.Fprintf(&js, `{"Time":"2026-01-02T03:04:05.123456789Z","Action":"pass","Package":"example.com/calc","Test":"TestCase%d","Elapsed":0}`+"\n", i)
		}
	}
	for _, c := range []struct{ name, out string }{{"text", text.String()}, {"json", js.String()}} {
		b.Run(c.name, func(b *testing.B) {
			data := []byte(c.out)
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				w := newTailWriter(DefaultMaxOutput)
				for off := 0; off < len(data); off += 32 << 10 {
					_, _ = w.Write(data[off:min(off+32<<10, len(data))])
				}
				w.finish()
			}
		})
	}
}

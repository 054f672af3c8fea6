// Command firstframe times, in one process, the stages between starting an
// engine on a store and the console's first frame with the task list:
// the engine's start (store open and load), the attach (the snapshot
// encoded, carried over the engine's socket and decoded) and the console's
// first render. It is the breakdown of bench/scale.sh's "console first
// frame", which times the same path through real processes in tmux.
//
//	go run ./bench/firstframe -C DIR [-n 5] [-cpuprofile FILE]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/engine"
	"github.com/orchestra-tui/orchestra-tui/ui"
)

func main() {
	dir := flag.String("C", ".", "the repository whose store to open (bench/storegen makes one)")
	n := flag.Int("n", 5, "rounds; medians are printed")
	prof := flag.String("cpuprofile", "", "write a CPU profile of every round to `FILE`")
	flag.Parse()
	if *prof != "" {
		f, err := os.Create(*prof)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	var load, attach, render, total []time.Duration
	for range *n {
		l, a, r, err := round(*dir)
		if err != nil {
			log.Fatal(err)
		}
		load, attach, render, total = append(load, l), append(attach, a), append(render, r), append(total, l+a+r)
	}
	fmt.Printf("medians of %d rounds:\n", *n)
	fmt.Printf("  engine start (store loaded)   %8.1f ms\n", ms(median(load)))
	fmt.Printf("  console attached (snapshot)   %8.1f ms\n", ms(median(attach)))
	fmt.Printf("  first frame rendered          %8.1f ms\n", ms(median(render)))
	fmt.Printf("  total                         %8.1f ms\n", ms(median(total)))
}

func round(dir string) (load, attach, render time.Duration, err error) {
	ctx := context.Background()
	t0 := time.Now()
	e, err := engine.Start(ctx, engine.Params{Dir: dir, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		return 0, 0, 0, err
	}
	defer e.Stop()
	t1 := time.Now()
	cl, err := engine.Dial(ctx, e.Paths.Socket, engine.Options{Watch: true, Kind: "console"})
	if err != nil {
		return 0, 0, 0, err
	}
	defer cl.Close()
	t2 := time.Now()
	m := ui.New(cl, ui.Options{NoAnim: true})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	frame := m.View().Content
	t3 := time.Now()
	if n := len(cl.Snapshot().Tasks); !strings.Contains(frame, fmt.Sprintf("%d tasks", n)) {
		return 0, 0, 0, fmt.Errorf("the first frame does not list the %d tasks", n)
	}
	return t1.Sub(t0), t2.Sub(t1), t3.Sub(t2), nil
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Command castshot renders the screen of an asciicast v2 recording at a
// given moment as ANSI text, for the README's screenshots:
//
//	go run ./docs/castshot -at 12s -o docs/demo.ans demo.cast
//
// It replays the recording's output into the same terminal emulator the
// console uses, so the picture is what a viewer of the cast would see.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/orchestra-tui/orchestra-tui/session"
)

func main() {
	at := flag.Duration("at", 10*time.Second, "the moment of the recording to render")
	out := flag.String("o", "", "write the ANSI screen to `FILE` (default: standard output)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: castshot [-at 10s] [-o FILE] RECORDING.cast")
		os.Exit(2)
	}
	f, err := os.Open(flag.Arg(0))
	if err != nil {
		fail(err)
	}
	defer f.Close()
	h, events, err := session.ReadCast(f)
	if err != nil {
		fail(err)
	}
	var upto []session.CastEvent
	for _, ev := range events {
		if ev.Time > at.Seconds() {
			break
		}
		upto = append(upto, ev)
	}
	screen := session.Replay(upto, h.Width, h.Height).Render() + "\n"
	if *out == "" {
		fmt.Print(screen)
		return
	}
	if err := os.WriteFile(*out, []byte(screen), 0o644); err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "castshot:", err)
	os.Exit(1)
}

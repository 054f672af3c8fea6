//go:build race

package session

// raceOn is set when the race detector is on: it allocates on its own,
// so allocation counts mean nothing then.
const raceOn = true

package e2e

import (
	"flag"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Most of these tests keep the machine busy (a real agent CLI starting,
// the race-instrumented coordinator, the verify gate's go test), and a few
// spend a long stretch waiting on a product clock with the machine idle: a
// provider limit's reset, a CLI's own retry, a forge outage. go test runs
// -parallel tests at once (GOMAXPROCS by default), so a waiting test used to
// hold one of the two lanes of a 2-core machine idle for its whole wait.
//
// Here a parallel test holds a slot while it works (parallel) and gives it
// back when it starts such a wait (waiting): cpuSlots tests at most are at
// work at once, and the tests that wait let others start. A test "at work"
// still waits most of the time (on its agents, its engines, a gate, the
// database): with one slot per core the whole package left the machine
// idle 52% of its 530 s (idle ticks in /proc/stat, every agent CLI
// installed), and with two per core 37% of 424 s. So cpuSlots is twice
// GOMAXPROCS, and unless -parallel is given go test's own limit is raised
// to twice cpuSlots, so that up to cpuSlots waiting tests run beside the
// working ones; an explicit -parallel N keeps go test's limit N and N
// slots.

var (
	// cpuSlots holds a token for each test at work.
	cpuSlots chan struct{}
	// released are the tests holding a slot, by test, each with the
	// function that gives it back (at most once).
	released sync.Map
)

// setParallel sizes cpuSlots to -parallel (twice GOMAXPROCS by default) and,
// unless -parallel was given, lets go test run twice as many tests at once.
// Call it from TestMain before m.Run.
func setParallel() {
	if !flag.Parsed() {
		flag.Parse()
	}
	slots := 2 * runtime.GOMAXPROCS(0)
	given := false
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "test.parallel" {
			given = true
		}
	})
	f := flag.Lookup("test.parallel")
	if f == nil {
		cpuSlots = make(chan struct{}, slots)
		return
	}
	if given {
		if g, ok := f.Value.(flag.Getter); ok {
			if n, ok := g.Get().(int); ok && n > 0 {
				slots = n
			}
		}
	} else {
		_ = f.Value.Set(strconv.Itoa(2 * slots))
	}
	cpuSlots = make(chan struct{}, slots)
}

// parallel is t.Parallel for a test that has no parallel subtests of its
// own: it also takes a slot of cpuSlots, given back when the test ends or
// when it calls waiting. A test with parallel subtests calls t.Parallel
// itself (it would hold a slot its subtests need).
func parallel(t *testing.T) {
	t.Helper()
	t.Parallel()
	asked := time.Now()
	cpuSlots <- struct{}{}
	if d := time.Since(asked); d > time.Second {
		// Counted in the test's elapsed time, but not its own.
		t.Logf("waited %v for a slot", d.Round(100*time.Millisecond))
	}
	var once sync.Once
	give := func() { once.Do(func() { <-cpuSlots }) }
	released.Store(t, give)
	t.Cleanup(func() {
		give()
		released.Delete(t)
	})
}

// waiting says the test from now on mostly waits on a product clock (a
// reset, a retry, an outage) and gives its slot to the next test. What it
// does after the wait runs beside the others.
func waiting(t *testing.T) {
	if give, ok := released.Load(t); ok {
		give.(func())()
	}
}

// Package sched asks the kernel to wake this process promptly. A key typed
// into a pane wakes three idle processes in turn (console, engine, session
// host); on a machine whose cores are busy with builds and tests, each
// wakeup can wait for the running task's whole time slice, and the key's
// tail latency is the sum of those waits.
//
// Linux's EEVDF scheduler (6.12 and later) takes a suggested time slice for
// an ordinary task (sched_attr.sched_runtime): a task with a shorter slice
// than the one running preempts it when it wakes. The share of CPU each task
// gets is unchanged (that follows its weight, its nice value); only the
// order of turns is. A process that mostly sleeps and answers events is the
// case the shorter slice is for.
package sched

// Slice is the time slice ShortSlice asks for: well under the kernel's
// default (0.75 ms times 1 + log2 of the core count), so a wakeup of ours
// preempts a busy task, and above the kernel's 100 µs floor.
const Slice = 300_000 // nanoseconds

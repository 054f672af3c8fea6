// Package soak holds the soak tests: tasks with corrections run by the real
// orchestra-tui binary while its engine is killed with SIGKILL at random
// points and restarted: the background engine with every session in a
// session host (TestSoak, the mode users run), and the headless run,
// console and engine in one process with its sessions inside it
// (TestSoakHeadless). See bench/soak.sh.
package soak

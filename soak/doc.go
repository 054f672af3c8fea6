// Package soak holds the soak test: tasks with corrections run by the real
// orchestra-tui binary while its engine (here the headless run, which is
// console and engine in one process) is killed with SIGKILL at random
// points and restarted. See soak_test.go and bench/soak.sh.
package soak

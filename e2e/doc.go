// Package e2e drives the real orchestra-tui binary the way a person would:
// in a terminal (tmux), by pressing keys and reading the screen. It has no
// code of its own outside its tests.
package e2e

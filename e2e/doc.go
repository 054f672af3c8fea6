// Package e2e holds end-to-end tests that run the whole console against
// real programs: the real Claude Code CLI in a pane against the scripted
// model server (demo/modelstub), and the console binary driven in tmux. It
// has no code of its own.
package e2e

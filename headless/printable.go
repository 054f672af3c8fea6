package headless

import "github.com/orchestra-tui/orchestra-tui/task"

// Printable returns s made safe for the operator's terminal, on one line.
// Text from tasks, corrections and agents ends up in status and headless
// output; left raw, an escape sequence in a task title could clear the
// screen, retitle the window or write the clipboard (OSC 52). It is
// task.PlainLine, the sanitiser every boundary shares.
func Printable(s string) string { return task.PlainLine(s) }

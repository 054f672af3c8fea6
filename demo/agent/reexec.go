package agent

import "os"

// ReexecEnv, set to "1" in a harness's environment, makes a test binary that
// calls MainIfReexec act as the scripted agent. Tests run real agents in
// real ptys this way without building the console binary: the scripted
// harness launches {{self}} agent --script FILE, and {{self}} is the test
// binary.
const ReexecEnv = "ORCH_AGENT_MAIN"

// MainIfReexec runs the scripted agent and exits when this process was
// started as one (ReexecEnv=1); otherwise it returns. Call it first in a
// test package's TestMain (or init).
func MainIfReexec() {
	if os.Getenv(ReexecEnv) != "1" {
		return
	}
	args := os.Args[1:]
	if len(args) > 0 && args[0] == "agent" {
		args = args[1:]
	}
	os.Exit(Main(args, os.Stdin, os.Stdout))
}

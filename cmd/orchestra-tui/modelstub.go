package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/orchestra-tui/orchestra-tui/demo/modelstub"
)

// modelStubCmd runs the scripted model server until interrupted.
func modelStubCmd(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveModelStub(ctx, args, stdout, stderr)
}

// serveModelStub runs the stub with the phase script until ctx ends. It
// prints the base URL and the environment a Claude Code CLI needs on
// stdout, and one line per request on stderr.
func serveModelStub(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("model-stub", "orchestra-tui model-stub [flags]\n\n"+
		"A scripted stand-in for the model service, so Claude Code (--harness claude) runs offline.\n"+
		"Each phase's reply writes that phase's example artifact; it changes no code, so a task's\n"+
		"verify gate stays red. It prints the environment to run claude (or orchestra-tui) with.", stderr)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	home := fs.String("home", "", "seed this directory as the CLI's HOME (onboarding done, --workdir trusted)")
	workdir := fs.String("workdir", ".", "with --home: the directory the CLI will run in, to mark trusted")
	model := fs.String("model", "", "model name to report in replies (default: the one asked for)")
	if err := fs.Parse(args); err != nil {
		return parseStatus(err)
	}
	srv := modelstub.New(modelstub.PhaseScript(modelstub.ScriptOptions{Model: *model}))
	srv.Addr = *addr
	srv.Logf = func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	base, err := srv.Start()
	if err != nil {
		return fail(stderr, err)
	}
	defer srv.Close()

	fmt.Fprintf(stdout, "model stub listening on %s\n", base)
	if *home != "" {
		if err := modelstub.SeedHome(*home, *workdir); err != nil {
			return fail(stderr, err)
		}
		fmt.Fprintf(stdout, "seeded %s for %s\n", *home, *workdir)
	} else {
		fmt.Fprintln(stdout, "pass --home DIR to seed a throwaway HOME; the values below name <home>")
	}
	// HOME is among them: use them in a subshell, not the operator's own.
	fmt.Fprintln(stdout, "# environment for the claude CLI; it sets HOME, so use it in a subshell: ( export ...; claude ... )")
	h := *home
	if h == "" {
		h = "<home>"
	}
	env := modelstub.ClaudeSetEnv(h, base)
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(stdout, "export %s=%q\n", k, env[k])
	}
	fmt.Fprintln(stdout, "# then: claude --allowedTools Bash Edit Write Read   (interrupt this command to stop the stub)")
	<-ctx.Done()
	fmt.Fprintf(stderr, "model stub: stopping after %d requests\n", len(srv.Requests()))
	return 0
}

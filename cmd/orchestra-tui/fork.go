package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/repo"
	"github.com/orchestra-tui/orchestra-tui/task"
)

const forkUsage = `usage:
  orchestra-tui fork train TASK [--harness H]   train a base for the task from its background
  orchestra-tui fork run TASK --prompt TEXT     run a block as a fork of the task's base
  orchestra-tui fork list [TASK]                bases with cache clocks and the policy's next action
`

// forkTimeout bounds one fork command: training reads the whole
// background, which the real service can take minutes over.
const forkTimeout = 15 * time.Minute

// forkCmd trains bases, runs forks and lists bases. With a console running
// the command goes through its control socket, so the console publishes
// what happened and keeps the base warm; with none it runs here against
// the store, and the next console finds the base.
func forkCmd(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && isHelp(args[0]) {
		fmt.Fprint(stdout, forkUsage)
		return 0
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, forkUsage)
		return 2
	}
	sub := args[0]
	fs := flag.NewFlagSet("fork "+sub, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, forkUsage+"\nflags:\n")
		fs.PrintDefaults()
	}
	dir := fs.String("C", ".", "run as if started in `DIR`")
	harness := fs.String("harness", "", "train: the harness to train on (default: the task's)")
	prompt := fs.String("prompt", "", "run: the block of work the fork should do")
	pos, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return parseStatus(err)
	}
	cmd := coord.Command{Author: author()}
	switch sub {
	case "train":
		if len(pos) != 1 {
			fmt.Fprint(stderr, forkUsage)
			return 2
		}
		cmd.Kind, cmd.Text = coord.CmdForkTrain, *harness
	case "run":
		if len(pos) != 1 || *prompt == "" {
			fmt.Fprint(stderr, forkUsage)
			return 2
		}
		cmd.Kind, cmd.Text = coord.CmdForkRun, *prompt
	case "list":
		if len(pos) > 1 {
			fmt.Fprint(stderr, forkUsage)
			return 2
		}
		cmd.Kind = coord.CmdForkList
	default:
		fmt.Fprintf(stderr, "orchestra-tui: unknown fork command %q\n%s", sub, forkUsage)
		return 2
	}
	if len(pos) == 1 {
		cmd.TaskID = task.ID(pos[0])
	}
	r, err := repo.Open(*dir)
	if err != nil {
		return fail(stderr, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), forkTimeout)
	defer cancel()
	res, err := engineDo(ctx, r.Root, cmd)
	if errors.Is(err, errNoEngine) {
		res, err = forkOffline(ctx, r.Root, cmd)
	}
	if err != nil {
		return fail(stderr, err)
	}
	fmt.Fprintln(stdout, res.Message)
	return 0
}

// forkOffline runs a fork command on a coordinator opened on the
// repository but not started: the store and the configuration are the
// console's, and nothing else runs.
func forkOffline(ctx context.Context, root string, cmd coord.Command) (coord.Result, error) {
	o, err := coord.Open(coord.OpenParams{Dir: root})
	if err != nil {
		return coord.Result{}, err
	}
	res, err := o.ForkCommand(ctx, cmd)
	return res, errors.Join(err, o.Close())
}

// parseInterspersed parses flags anywhere among the arguments, so
// `fork run TASK --prompt TEXT` reads as the usage line writes it, and
// returns the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

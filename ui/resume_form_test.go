package ui

import (
	"errors"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/stretchr/testify/require"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

func TestResumeFormSendsTheFileHarnessAndModel(t *testing.T) {
	t.Parallel()
	b := setup(t, everyState).size(120, 40)
	resumed := fixtureID(0) // the stub answers as if the queued task were the resumed one
	b.eng.result = func(c coord.Command) (coord.Result, error) {
		return coord.Result{TaskID: resumed, Message: "resumed task " + resumed.Short() + " from handoff.json at phase implement"}, nil
	}
	b.selectState(task.StateRunning).press("n")
	require.Contains(t, ansi.Strip(b.view()), "ctrl+r resumes a task from a handoff file")
	b.press("ctrl+r")
	require.Contains(t, ansi.Strip(b.view()), "RESUME FROM A HANDOFF FILE")
	b.typeText("../a/handoff.json").press("tab").typeText("claude").press("tab").typeText("claude-opus-4-1").press("enter")

	cmds := b.eng.sentCommands()
	require.Len(t, cmds, 1)
	require.Equal(t, coord.Command{Kind: coord.CmdResume, Path: "../a/handoff.json", Harness: "claude", Model: "claude-opus-4-1", Author: "ana"}, cmds[0])
	require.Equal(t, modeNormal, b.m.mode)
	require.Contains(t, ansi.Strip(b.view()), "resumed task "+resumed.Short()+" from handoff.json at phase implement")
	require.Equal(t, resumed, b.m.selID, "the resumed task is selected")
}

func TestResumeFormKeepsWhatWasTypedAcrossTheToggle(t *testing.T) {
	t.Parallel()
	b := setup(t, nil).size(80, 24).press("n")
	b.typeText("fix login").press("ctrl+r").typeText("handoff.json").press("ctrl+r")
	require.Equal(t, "fix login", b.m.form.fields[0].Value())
	b.press("ctrl+r")
	require.Equal(t, "handoff.json", b.m.form.resumeFields[0].Value())
	b.press("esc")
	require.Equal(t, modeNormal, b.m.mode)
	require.Empty(t, b.eng.sentCommands())
	b.press("n")
	require.False(t, b.m.form.resume, "n opens the new-task form, cleared")
	require.Empty(t, b.m.form.resumeFields[0].Value())
}

func TestResumeFormRefusesNoFileAndShowsTheEnginesRefusal(t *testing.T) {
	t.Parallel()
	b := setup(t, nil).size(80, 24).press("n", "ctrl+r", "enter")
	require.Empty(t, b.eng.sentCommands())
	require.Equal(t, modeForm, b.m.mode)
	require.Contains(t, ansi.Strip(b.view()), "file: name the handoff file to resume from")

	b.eng.result = func(coord.Command) (coord.Result, error) {
		return coord.Result{}, errors.New("resume x.json: nothing was created: task.verify: missing")
	}
	b.typeText("x.json").press("enter")
	require.Len(t, b.eng.sentCommands(), 1)
	out := ansi.Strip(b.view())
	require.Contains(t, out, `resume from "x.json" failed: resume x.json`, "the status bar says it failed")
	require.Equal(t, modeForm, b.m.mode, "the form comes back with what was typed and the whole reason")
	require.Equal(t, "x.json", b.m.form.resumeFields[0].Value())
	require.Contains(t, out, "task.verify: missing")
}

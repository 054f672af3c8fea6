package ui

import (
	"strings"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/orchestra-tui/orchestra-tui/coord"
	"github.com/orchestra-tui/orchestra-tui/task"
)

// newInput builds a text input with a steady cursor: a blinking one would
// repaint the screen twice a second and make recordings unstable.
func newInput(prompt, placeholder string) textinput.Model {
	ti := textinput.New()
	ti.Prompt = prompt
	ti.Placeholder = placeholder
	s := ti.Styles()
	s.Cursor.Blink = false
	ti.SetStyles(s)
	return ti
}

// resumeKey switches the new-task form between a task typed in and a task
// resumed from a handoff file. A control key, because every printable key
// types into a field.
const resumeKey = "ctrl+r"

// newTaskForm is the small form n opens: title, goal, verify command and
// harness; or, switched with resumeKey, the handoff file to resume a task
// from, with an optional harness and model to finish it on.
type newTaskForm struct {
	fields       []textinput.Model // a new task
	resumeFields []textinput.Model // a task from a handoff file
	resume       bool              // which of the two is shown
	active       int
	err          string
}

func newTaskFormModel() newTaskForm {
	return newTaskForm{
		fields: []textinput.Model{
			newInput("title   ", "fix the flaky login test"),
			newInput("goal    ", "what done looks like, in a sentence or two"),
			newInput("verify  ", "the command that runs your tests, e.g. go test ./..."),
			newInput("harness ", "blank: scripted, the demo agent"),
		},
		resumeFields: []textinput.Model{
			newInput("file    ", "handoff.json (from orchestra-tui handoff export)"),
			newInput("harness ", "the file's"),
			newInput("model   ", "the file's, or the harness's default"),
		},
	}
}

// shown is the field set on screen; its elements are the form's own.
func (f *newTaskForm) shown() []textinput.Model {
	if f.resume {
		return f.resumeFields
	}
	return f.fields
}

// all is every field of both sets, for sizing.
func (f *newTaskForm) all() []*textinput.Model {
	var out []*textinput.Model
	for i := range f.fields {
		out = append(out, &f.fields[i])
	}
	for i := range f.resumeFields {
		out = append(out, &f.resumeFields[i])
	}
	return out
}

// open clears the form and focuses the first field of the new-task set.
func (f *newTaskForm) open() tea.Cmd {
	for _, fl := range f.all() {
		fl.Reset()
		fl.Blur()
	}
	f.resume, f.active, f.err = false, 0, ""
	return f.fields[0].Focus()
}

// toggle switches between the two field sets, keeping what was typed in
// each.
func (f *newTaskForm) toggle() tea.Cmd {
	f.shown()[f.active].Blur()
	f.resume, f.active, f.err = !f.resume, 0, ""
	return f.shown()[0].Focus()
}

func (f *newTaskForm) move(delta int) tea.Cmd {
	fs := f.shown()
	fs[f.active].Blur()
	f.active = (f.active + delta + len(fs)) % len(fs)
	return fs[f.active].Focus()
}

// update gives a message to the focused field.
func (f *newTaskForm) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	fs := f.shown()
	fs[f.active], cmd = fs[f.active].Update(msg)
	return cmd
}

// task builds the task to add, or says what is missing.
func (f *newTaskForm) task() (task.Task, error) {
	v := func(i int) string { return strings.TrimSpace(f.fields[i].Value()) }
	t := task.Task{
		Title:    v(0),
		Goal:     v(1),
		Verify:   v(2),
		Harness:  v(3),
		Pipeline: task.DefaultPipeline(),
	}
	return t, t.Validate()
}

// command is what enter sends: add the typed task, or resume the file's.
// The file is read and checked by the coordinator; here only its absence
// is caught.
func (f *newTaskForm) command() (coord.Command, string) {
	if f.resume {
		v := func(i int) string { return strings.TrimSpace(f.resumeFields[i].Value()) }
		if v(0) == "" {
			return coord.Command{}, "file: name the handoff file to resume from"
		}
		return coord.Command{Kind: coord.CmdResume, Path: v(0), Harness: v(1), Model: v(2)}, ""
	}
	t, err := f.task()
	if err != nil {
		return coord.Command{}, strings.ReplaceAll(err.Error(), "\n", "; ")
	}
	return coord.Command{Kind: coord.CmdAdd, Task: &t}, ""
}

// key takes a key typed into the form: leave says the form closes (esc,
// or enter with what it adds or resumes), c is the command enter makes.
func (f *newTaskForm) key(msg tea.KeyPressMsg) (cmd tea.Cmd, c *coord.Command, leave bool) {
	switch msg.String() {
	case "esc":
		return nil, nil, true
	case resumeKey:
		return f.toggle(), nil, false
	case "tab", "down":
		return f.move(1), nil, false
	case "shift+tab", "up":
		return f.move(-1), nil, false
	case "enter":
		c, problem := f.command()
		if problem != "" {
			f.err = problem
			return nil, nil, false
		}
		return nil, &c, true
	}
	return f.update(msg), nil, false
}

// render draws the form in w×h; harnesses are the ones it offers.
func (f *newTaskForm) render(st styles, harnesses []HarnessInfo, w, h int) []string {
	var lines []string
	if f.resume {
		lines = append(lines,
			st.prompt.Render("RESUME FROM A HANDOFF FILE")+st.dim.Render(" · tab moves · enter resumes · esc cancels"),
			st.dim.Render("resumes at the phase reached · blank harness/model: the file's"),
			"")
		for i := range f.resumeFields {
			lines = append(lines, f.resumeFields[i].View())
		}
	} else {
		lines = append(lines,
			st.prompt.Render("NEW TASK")+st.dim.Render(" · tab/shift+tab moves · enter adds · esc cancels"),
			st.dim.Render(resumeKey+" resumes a task from a handoff file instead"),
			"")
		for i := range f.fields {
			lines = append(lines, f.fields[i].View())
		}
		lines = append(lines, f.harnessLines(st, harnesses, w)...)
		lines = append(lines, "", st.dim.Render("pipeline: "+task.DefaultPipeline().String()))
	}
	if f.err != "" {
		for _, l := range wrap(f.err, w) {
			lines = append(lines, st.statusErr.Render(l))
		}
	}
	return block(lines, w, h)
}

// HarnessInfo is one harness the new-task form offers: its name and whether
// its program was found (on PATH, or the built-in scripted agent).
type HarnessInfo struct {
	Name  string
	Found bool
}

// scriptedHarness is the built-in demo agent, the default for a task that
// names no harness.
const scriptedHarness = "scripted"

// harnessLines lists the harnesses under the form, and warns when the one
// chosen cannot do the work: the demo agent, a name nobody defined, or a
// program that is not installed.
func (f *newTaskForm) harnessLines(st styles, hs []HarnessInfo, w int) []string {
	if len(hs) == 0 {
		return nil
	}
	names := make([]string, 0, len(hs))
	for _, h := range hs {
		n := h.Name
		if !h.Found {
			n += " (not installed)"
		}
		names = append(names, n)
	}
	var out []string
	for _, l := range wrap("harnesses: "+strings.Join(names, " · "), w) {
		out = append(out, st.dim.Render(l))
	}
	chosen := strings.TrimSpace(f.fields[3].Value())
	warn := ""
	switch {
	case chosen == "" || chosen == scriptedHarness:
		warn = "⚠ " + scriptedHarness + " is the built-in demo agent: it cannot change your code, so the verify gate stays red. Name an agent CLI above."
		if chosen == "" {
			warn = "⚠ blank means " + scriptedHarness + ", the built-in demo agent: it cannot change your code, so the verify gate stays red. Name an agent CLI above."
		}
	default:
		known := false
		for _, h := range hs {
			if h.Name == chosen {
				known = true
				if !h.Found {
					warn = "⚠ " + chosen + "'s program is not installed here: the task will wait, with no attempt counted, until it is."
				}
			}
		}
		if !known {
			warn = "⚠ no harness named " + chosen + "; orchestra.toml can define one ([harness." + chosen + "])."
		}
	}
	for _, l := range wrap(warn, w) {
		if l != "" {
			out = append(out, st.warn.Render(l))
		}
	}
	return out
}

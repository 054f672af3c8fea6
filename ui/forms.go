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

// newTaskForm is the small form n opens: title, goal, verify command and
// harness.
type newTaskForm struct {
	fields []textinput.Model
	active int
	err    string
}

var formLabels = []string{"title", "goal", "verify", "harness"}

func newTaskFormModel() newTaskForm {
	return newTaskForm{fields: []textinput.Model{
		newInput("title   ", "fix the flaky login test"),
		newInput("goal    ", "what done looks like, in a sentence or two"),
		newInput("verify  ", "go test ./..."),
		newInput("harness ", "default"),
	}}
}

// open clears the form and focuses its first field.
func (f *newTaskForm) open() tea.Cmd {
	for i := range f.fields {
		f.fields[i].Reset()
		f.fields[i].Blur()
	}
	f.active, f.err = 0, ""
	return f.fields[0].Focus()
}

func (f *newTaskForm) move(delta int) tea.Cmd {
	f.fields[f.active].Blur()
	f.active = (f.active + delta + len(f.fields)) % len(f.fields)
	return f.fields[f.active].Focus()
}

// update gives a message to the focused field.
func (f *newTaskForm) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	f.fields[f.active], cmd = f.fields[f.active].Update(msg)
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

func (m *Model) formKey(msg tea.KeyPressMsg) tea.Cmd {
	switch msg.String() {
	case "esc":
		m.mode = modeNormal
		return nil
	case "tab", "down":
		return m.form.move(1)
	case "shift+tab", "up":
		return m.form.move(-1)
	case "enter":
		t, err := m.form.task()
		if err != nil {
			m.form.err = strings.ReplaceAll(err.Error(), "\n", "; ")
			return nil
		}
		m.mode = modeNormal
		return m.do(coord.Command{Kind: coord.CmdAdd, Task: &t})
	}
	return m.form.update(msg)
}

// renderForm draws the new-task form in w×h.
func (m *Model) renderForm(w, h int) []string {
	lines := []string{
		m.st.prompt.Render("NEW TASK") + m.st.dim.Render(" · tab/shift+tab moves · enter adds · esc cancels"),
		"",
	}
	for i := range m.form.fields {
		lines = append(lines, m.form.fields[i].View())
	}
	lines = append(lines, "", m.st.dim.Render("pipeline: "+task.DefaultPipeline().String()))
	if m.form.err != "" {
		lines = append(lines, m.st.statusErr.Render(m.form.err))
	}
	return block(lines, w, h)
}

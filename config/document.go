package config

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// keyDocs documents every key of orchestra.toml. Document prints them, and
// a test fails for a setting added to Config without a line here, so the
// printed file always has every setting.
var keyDocs = map[string]string{
	"harness": "Agent CLIs, by name: how to launch one and talk to it. The built-in ones are below, commented out;\n" +
		"a [harness.NAME] table overrides the fields it names (a new name needs argv and ready at least).",
	"harness.argv":           "Exact argument vector; {{self}} is this binary, {{model}} the task's model. No shell.",
	"harness.env":            "Variables copied from the console's environment (an allow-list; a trailing * is a prefix). Left out: PATH HOME USER LOGNAME LANG LC_* TERM COLORTERM TMPDIR SHELL.",
	"harness.set_env":        "The harness's own variables.",
	"harness.delivery":       `How the brief reaches the program: "type" (typed at its prompt), "arg", "stdin" or "file" (.orchestra/brief.md; nothing typed).`,
	"harness.ready":          "Regular expression on the screen: the program is ready for input once it matches.",
	"harness.submit":         `Key sequence that submits a prompt, Go-escaped ("\r").`,
	"harness.pending":        "Regular expression matching the screen while typed input waits unsubmitted (a paste placeholder); the submit key is re-sent until it goes.",
	"harness.queued":         "Regular expression matching the screen while the program holds typed input in its own queue, to send when its turn ends; such input counts as taken.",
	"harness.submit_retries": "How many times the submit key is re-sent before the input is refused (0: 3).",
	"harness.tested":         "Oldest and newest version of the program these settings were proven with; `harness check` compares.",
	"harness.dialogs":        "Screens the program stops at for the operator, each \"NAME: REGEX\"; while one shows the task needs you and its launch clock stands still.",
	"harness.limits":         "How the program shows its provider's refusals, each \"KIND: REGEX\" (KIND: usage limit, rate limit, overloaded, login expired); while one shows the task waits for the reset, its lease held and no attempt charged.",
	"harness.limit_resume":   "What is typed at a limit's reset to go on in the same conversation (empty: \"continue\"; \"<submit>\": the submit key alone).",
	"harness.limit_retry":    "A regular expression on a limit's message saying the program retries by itself; then nothing is typed at the reset.",
	"harness.quiet":          "The screen must stay still this long after ready before the launch counts.",
	"harness.launch_timeout": "How long a launch may take before it is refused.",
	"harness.own_grace":      "How long after the last input or change of screen the program's own CPU time counts as work for its lease and the stuck flag (0: 1m).",
	"harness.resubmit":       `What resubmitting a stuck pane sends: "submit" (the submit key), "brief" (the brief again) or "last-input".`,
	"harness.volatile":       "Regular expressions of screen regions that change without progress (spinners, clocks).",
	"harness.capabilities":   "Tags a task's --capability must find in the slot that runs it.",
	"harness.capacity":       "Sessions of this harness at once when no [[slots]] are configured (0: one).",
	"harness.trust":          "Where the program keeps the folders it trusts (\"claude-projects\", \"codex-projects\"); the worktrees the product makes are marked trusted there.",
	"harness.usage":          "Where the program reports tokens spent, for the usage and cost columns.",

	"lease":              "Leases: a task's right to run, renewed only when its pane made real progress.",
	"lease.length":       "How long a lease lasts from its grant or last renewal.",
	"lease.window":       "The renewal window before the deadline, in which progress renews the lease.",
	"lease.max_renewals": "Renewals of one lease before it must end (the session is stopped and relaunched).",
	"lease.max_attempts": "Attempts of one phase before the task fails (`orchestra-tui retry` gives it more).",
	"lease.tick":         "How often leases are evaluated.",

	"stuck":               "A pane whose screen stops changing while its phase is unfinished is flagged stuck.",
	"stuck.after":         "Screen unchanged this long: stuck.",
	"stuck.auto_resubmit": "Resubmits the console makes by itself before leaving it to you (0: none).",

	"verify":         "The verify gate: the task's own tests, re-run by the console.",
	"verify.timeout": "A test run longer than this is killed and the verdict is an error.",

	"pane":         "The terminal size a session starts at (the console resizes it to the pane it shows).",
	"pane.cols":    "Columns.",
	"pane.rows":    "Rows.",
	"pane.history": "Lines that scrolled off a pane's top kept for scroll mode (0: none; the recording keeps everything).",
	"pane.size":    `Whose size a pane's pty takes when several consoles show it (tmux's window-size): "latest" (the console that last typed into or focused it; the others show it cut or padded, marked), "smallest" or "largest".`,

	"brief":        "The brief each session starts from.",
	"brief.budget": "Size budget in bytes, trimmed from the bottom up (0: the renderer's default).",

	"slots": "Worker slots: which harness runs how many sessions at once. With none, one slot per harness.\n" +
		"Example:\n[[slots]]\nname = \"fast\"\nharness = \"claude\"\ncapacity = 2\ncapabilities = [\"gpu\"]",
	"slots.name":         "The slot's name, shown in the console.",
	"slots.harness":      "The harness its sessions run.",
	"slots.capacity":     "Sessions at once.",
	"slots.capabilities": "Tags it offers to tasks that need them.",

	"prices": "Prices per million tokens, in US dollars, by model id, for the cost column and [budget]. The built-in table\n" +
		"below holds the models the built-in harnesses use by default; a table of the same model replaces its entry. Example:\n" +
		"[prices.\"claude-sonnet-4-5\"]\ninput = 3.0\noutput = 15.0\ncache_creation = 3.75\ncache_read = 0.3",
	"prices.input":          "Input tokens.",
	"prices.output":         "Output tokens.",
	"prices.cache_creation": "Tokens written to the prompt cache.",
	"prices.cache_read":     "Tokens read from the prompt cache.",

	"budget":      "What tasks may spend, priced by [prices]; \"0 USD\" means no limit. Both are notified once and shown in the list.",
	"budget.task": "A task whose sessions have spent this is parked at the end of its turn (the reply that reached it), with the figures;\nunpark it, or raise the budget, to go on.",
	"budget.day":  "Once the day's spend of every task reaches this, nothing new starts until the next day (the engine's clock)\nor a raised budget; sessions running go on, each within its task's budget.",

	"fork":                "Trained bases and the forks run from them (`orchestra-tui fork`).",
	"fork.cache_lifetime": "How long the model service keeps a prompt cache after its last read.",
	"fork.expected_gap":   "How long after a base's last use the next fork is expected.",
	"fork.ping_lead":      "How long before the cache expires a keep-warm ping is sent.",

	"finalise":           "The end of the loop: what happens to an approved task's branch.",
	"finalise.merge":     `How merge brings the branch in: "ff" (fast-forward, else a merge commit), "ff-only" or "no-ff".`,
	"finalise.push":      "Push the branch on approve and, where gh is installed, open a pull request.",
	"finalise.remote":    "The remote to push to.",
	"console":            "How the console draws on the operator's terminal.",
	"console.colors":     `Colours the console draws with: "auto" (COLORTERM, tmux's RGB/Tc, TERM), "truecolor", "256" or "16".`,
	"finalise.queue":     "Approve hands the task to the merge queue: merged onto the base in a scratch worktree, its tests re-run there, the base moved only when green.",
	"finalise.integrate": `How the merge queue brings a branch onto the base: "merge" or "rebase".`,
	"finalise.base":      "The branch the merge queue lands work on; empty: the branch checked out when the queue takes the task.",

	"limits":                  "Bounds on what operators and agents can make the console hold.",
	"limits.correction_bytes": "The largest correction accepted.",
	"limits.recording_bytes":  "Cap on one session's recording (0: none).",
	"limits.on_limit":         "When an agent's provider shows a usage or rate limit: \"wait\" (hold the session, lease and attempt, and type \"continue\" at the reset; new sessions of that harness wait too) or \"handoff:HARNESS\" (move the task to that harness at once, with its continuity).",
	"limits.limit_wait":       "How long a limit whose message names no reset waits before the session goes on.",

	"notify":          "How you hear that a task needs you: it awaits review, is stuck, was refused or failed.",
	"notify.bell":     "Ring the terminal bell in the console (off with --no-anim).",
	"notify.desktop":  "Send a desktop notification through the terminal, OSC 9 and OSC 777 (off with --no-anim).",
	"notify.command":  "A command the engine runs for each such event, with the event as JSON on its standard input\nand in $ORCHESTRA_NOTICE, e.g. [\"notify-send\", \"orchestra-tui\", \"a task needs you\"].",
	"store":           "Where task state lives.",
	"store.url":       "A postgres:// URL for a store engines on several machines share; empty: SQLite under .orchestra/.\nORCHESTRA_STORE_URL, when set, takes its place.",
	"store.timeout":   "How long a store call may take before it fails: a database that stops answering (a partition) is then\nan outage the engine weathers, not a hang.",
	"fleet":           "Engines on several machines sharing one PostgreSQL store ([store] url).",
	"fleet.host":      "This machine's name in `orchestra-tui engines` and beside the tasks it runs (empty: its hostname).",
	"fleet.ssh":       "The ssh destination ([user@]host) at which other engines reach this machine to draw the panes of\nits sessions in their consoles (`ssh DEST orchestra-tui attach --stdio`); empty: its hostname.",
	"fleet.remote":    "The git remote each sealed phase is pushed to and a taken-over task's branch fetched from (empty: no push).",
	"fleet.heartbeat": "How often the engine records that it is alive.",
	"fleet.ttl":       "How old an engine's heartbeat may grow before other engines take its tasks over.",
	"fleet.key": "The fleet key that signs every task (mode 0600; the same file on every machine of the fleet, never in the store).\n" +
		"Empty: orchestra-tui/fleet.key in the user's configuration directory, created on first use.",
}

// Document renders cfg as a commented orchestra.toml with every setting:
// each section and key with what it does. Harness specs, slots and prices
// are written commented out (uncommenting them overrides or adds); every
// other value is live, so the file parses back to cfg.
func Document(cfg Config) string {
	var b strings.Builder
	b.WriteString("# orchestra.toml: every setting of orchestra-tui, with its value.\n")
	b.WriteString("# A repository needs no orchestra.toml: without one, the defaults below apply.\n")
	b.WriteString("# Keep only what you change; an unknown key or a bad value stops every command with a message.\n")
	cv := reflect.ValueOf(cfg)
	ct := cv.Type()
	for i := range ct.NumField() {
		f := ct.Field(i)
		name := tomlName(f)
		if name == "" {
			continue
		}
		b.WriteString("\n")
		comment(&b, keyDocs[name], "")
		v := cv.Field(i)
		switch name {
		case "harness":
			names := make([]string, 0, v.Len())
			for _, k := range v.MapKeys() {
				names = append(names, k.String())
			}
			sort.Strings(names)
			b.WriteString("# The keys of a [harness.NAME] table:\n")
			st := v.Type().Elem()
			for j := range st.NumField() {
				if key := tomlName(st.Field(j)); key != "" {
					fmt.Fprintf(&b, "#   %-15s %s\n", key, keyDocs["harness."+key])
				}
			}
			for _, n := range names {
				spec := v.MapIndex(reflect.ValueOf(n))
				fmt.Fprintf(&b, "#\n# [harness.%s]\n", n)
				writeFields(&b, spec, "harness", "# ", false)
			}
			continue
		case "slots":
			for j := range v.Len() {
				b.WriteString("[[slots]]\n")
				writeFields(&b, v.Index(j), "slots", "", true)
			}
			continue
		case "prices":
			names := make([]string, 0, v.Len())
			for _, k := range v.MapKeys() {
				names = append(names, k.String())
			}
			sort.Strings(names)
			for i, n := range names {
				fmt.Fprintf(&b, "[prices.%q]\n", n)
				// The columns are documented once, at the first model.
				section := "prices"
				if i > 0 {
					section = ""
				}
				writeFields(&b, v.MapIndex(reflect.ValueOf(n)), section, "", true)
			}
			continue
		}
		fmt.Fprintf(&b, "[%s]\n", name)
		writeFields(&b, v, name, "", true)
	}
	return b.String()
}

// writeFields writes a struct's keys, each after its documentation; with
// all false, zero values are left out.
func writeFields(b *strings.Builder, v reflect.Value, section, prefix string, all bool) {
	t := v.Type()
	for i := range t.NumField() {
		key := tomlName(t.Field(i))
		if key == "" {
			continue
		}
		fv := v.Field(i)
		if !all && fv.IsZero() {
			continue
		}
		if prefix == "" {
			comment(b, keyDocs[section+"."+key], "")
		}
		if fv.Kind() == reflect.Slice && fv.Len() == 0 {
			// TOML has no nil: show the key, commented out, so it can be
			// found and filled in.
			b.WriteString("# " + key + " = []\n")
			continue
		}
		if fv.Kind() == reflect.Map {
			// Inline, so it stays inside its table (and its comment).
			b.WriteString(prefix + key + " = " + inlineTable(fv) + "\n")
			continue
		}
		var line bytes.Buffer
		if err := toml.NewEncoder(&line).Encode(map[string]any{key: fv.Interface()}); err != nil {
			fmt.Fprintf(b, "%s# %s: %v\n", prefix, key, err)
			continue
		}
		for _, l := range strings.Split(strings.TrimRight(line.String(), "\n"), "\n") {
			b.WriteString(prefix + l + "\n")
		}
	}
}

// inlineTable renders a map of string keys as a TOML inline table.
func inlineTable(m reflect.Value) string {
	keys := make([]string, 0, m.Len())
	for _, k := range m.MapKeys() {
		keys = append(keys, k.String())
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		var v bytes.Buffer
		if err := toml.NewEncoder(&v).Encode(map[string]any{"v": m.MapIndex(reflect.ValueOf(k)).Interface()}); err != nil {
			continue
		}
		parts = append(parts, fmt.Sprintf("%q = %s", k, strings.TrimSpace(strings.TrimPrefix(v.String(), "v = "))))
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

func comment(b *strings.Builder, doc, prefix string) {
	if doc == "" {
		return
	}
	for _, l := range strings.Split(doc, "\n") {
		b.WriteString(prefix + "# " + l + "\n")
	}
}

// tomlName is a field's key in orchestra.toml, "" when it has none.
func tomlName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
	if name == "-" {
		return ""
	}
	return name
}

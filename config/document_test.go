package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The printed defaults parse back to the defaults: nothing in it is a
// value the program does not use.
func TestDocumentOfTheDefaultsParsesBackToThem(t *testing.T) {
	t.Parallel()
	doc := Document(Default())
	cfg, err := Parse("defaults", doc)
	require.NoError(t, err, doc)
	require.Equal(t, Default(), cfg)
}

// Every key of orchestra.toml is documented and printed, so a setting added
// to Config without documentation fails here.
func TestDocumentNamesEverySetting(t *testing.T) {
	t.Parallel()
	doc := Document(Default())
	for _, key := range allKeys(reflect.TypeOf(Config{}), "") {
		require.NotEmpty(t, keyDocs[key], "%s has no documentation in keyDocs", key)
		section, field, _ := strings.Cut(key, ".")
		if field == "" {
			require.Contains(t, doc, section, "section %s is not printed", section)
			continue
		}
		if section == "harness" {
			require.Regexp(t, `(?m)^#   `+field+` `, doc, "%s is not described", key)
			continue
		}
		require.Regexp(t, `(?m)^(# )?`+field+` = `, doc, "%s is not printed", key)
	}
	for _, want := range []string{"[lease]", "[stuck]", "[pane]", "# [[slots]]", "# [harness.claude]", "[finalise]"} {
		require.Contains(t, doc, want)
	}
}

// A config with slots and prices prints them live, and parses back.
func TestDocumentOfAConfigWithSlotsAndPrices(t *testing.T) {
	t.Parallel()
	cfg, err := Parse("x", "[[slots]]\nname = \"fast\"\nharness = \"scripted\"\ncapacity = 2\ncapabilities = [\"gpu\"]\n\n[prices.\"m-1\"]\ninput = 3.0\noutput = 15.0\n")
	require.NoError(t, err)
	back, err := Parse("document", Document(cfg))
	require.NoError(t, err, Document(cfg))
	require.Equal(t, cfg, back)
}

// allKeys lists "section" and "section.key" for every toml key of t.
func allKeys(t reflect.Type, section string) []string {
	var out []string
	for i := range t.NumField() {
		name := tomlName(t.Field(i))
		if name == "" {
			continue
		}
		ft := t.Field(i).Type
		if section != "" {
			out = append(out, section+"."+name)
			continue
		}
		out = append(out, name)
		switch ft.Kind() {
		case reflect.Map, reflect.Slice:
			ft = ft.Elem()
		}
		if ft.Kind() == reflect.Struct && ft.Name() != "Duration" {
			out = append(out, allKeys(ft, name)...)
		}
	}
	return out
}

// Each built-in harness, uncommented, is the harness as it is built in.
func TestDocumentedHarnessesUncommentToThemselves(t *testing.T) {
	t.Parallel()
	lines := strings.Split(Document(Default()), "\n")
	for name, want := range Default().Harness {
		var block []string
		in := false
		for _, l := range lines {
			switch {
			case l == "# [harness."+name+"]":
				in = true
			case in && (l == "#" || l == ""):
				in = false
			}
			if in {
				block = append(block, strings.TrimPrefix(l, "# "))
			}
		}
		require.NotEmpty(t, block, name)
		cfg, err := Parse(name, strings.Join(block, "\n"))
		require.NoError(t, err, strings.Join(block, "\n"))
		require.Equal(t, want, cfg.Harness[name], name)
	}
}

// docs/orchestra.toml, which the README links, is the current output of
// `orchestra-tui config --defaults`.
func TestDocsCopyOfTheDefaultsIsCurrent(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("..", "docs", "orchestra.toml"))
	require.NoError(t, err)
	require.Equal(t, Document(Default()), string(data),
		"docs/orchestra.toml is stale: go run ./cmd/orchestra-tui config --defaults > docs/orchestra.toml")
}

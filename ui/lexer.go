package ui

import (
	"embed"
	"io/fs"
	"sync"

	"github.com/alecthomas/chroma/v2"
)

// codeLexers holds the definitions of the languages the Diff tab colours:
// copies of chroma's own (its lexers/embedded, MIT, Copyright (C) 2017 Alec
// Thomas, see lexers/COPYING) for the languages agents most often change.
// The binary does not import chroma's lexers package: its init parses all
// of its ~280 definitions, 12 ms and 2.7 MB of heap in every process of
// this binary (session hosts, the engine, one-shot commands), though only
// the console draws a diff. A file of another language is shown plain.
//
//go:embed lexers/*.xml
var codeLexers embed.FS

// codeRegistry is the registry of those lexers, built on the first diff
// drawn. Lexers that embed another language (HTML's CSS and JavaScript,
// a Dockerfile's shell) find it here.
var codeRegistry = sync.OnceValue(func() *chroma.LexerRegistry {
	reg := chroma.NewLexerRegistry()
	paths, err := fs.Glob(codeLexers, "lexers/*.xml")
	if err != nil {
		panic("ui: the embedded lexers: " + err.Error()) // a constant pattern
	}
	for _, p := range paths {
		reg.Register(chroma.MustNewXMLLexer(codeLexers, p))
	}
	reg.Register(goLexer())
	reg.Register(markdownLexer())
	return reg
})

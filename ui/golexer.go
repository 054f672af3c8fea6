package ui

import "github.com/alecthomas/chroma/v2"

// The Go and Markdown lexers are written in Go in chroma (its lexers/go.go
// and lexers/markdown.go, MIT, Copyright (C) 2017 Alec Thomas, see
// lexers/COPYING), so they are copied here as code: see codeLexers for why
// chroma's lexers package is not imported. Two cuts: Go's raw strings are
// one string token (chroma colours a text/template inside them), and
// Markdown's YAML front matter is not told apart, as the Diff tab colours
// one line at a time.

// goLexer is chroma's Go lexer.
func goLexer() chroma.Lexer {
	return chroma.MustNewLexer(&chroma.Config{
		Name:      "Go",
		Aliases:   []string{"go", "golang"},
		Filenames: []string{"*.go"},
		MimeTypes: []string{"text/x-gosrc"},
	}, goRules)
}

// markdownLexer is chroma's Markdown lexer.
func markdownLexer() chroma.Lexer {
	return chroma.MustNewLexer(&chroma.Config{
		Name:      "markdown",
		Aliases:   []string{"md", "mkd"},
		Filenames: []string{"*.md", "*.mkd", "*.markdown"},
		MimeTypes: []string{"text/x-markdown"},
	}, markdownRules)
}

func goRules() chroma.Rules {
	return chroma.Rules{
		"root": {
			rule(`\n`, chroma.TextWhitespace),
			rule(`\s+`, chroma.TextWhitespace),
			rule(`//[^\s\n\r][^\n\r]*`, chroma.CommentPreproc),
			rule(`//[^\n\r]*`, chroma.CommentSingle),
			rule(`/(\\\n)?[*](.|\n)*?[*](\\\n)?/`, chroma.CommentMultiline),
			rule(`(import|package)\b`, chroma.KeywordNamespace),
			rule(`(var|func|struct|map|chan|type|interface|const)\b`, chroma.KeywordDeclaration),
			rule(chroma.Words(``, `\b`, `break`, `default`, `select`, `case`, `defer`, `go`, `else`, `goto`, `switch`, `fallthrough`, `if`, `range`, `continue`, `for`, `return`), chroma.Keyword),
			rule(`(true|false|iota|nil)\b`, chroma.KeywordConstant),
			rule(chroma.Words(``, `\b(\()`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `print`, `println`, `panic`, `recover`, `close`, `complex`, `real`, `imag`, `len`, `cap`, `append`, `copy`, `delete`, `new`, `make`, `clear`, `min`, `max`), chroma.ByGroups(chroma.NameBuiltin, chroma.Punctuation)),
			rule(chroma.Words(``, `\b`, `uint`, `uint8`, `uint16`, `uint32`, `uint64`, `int`, `int8`, `int16`, `int32`, `int64`, `float`, `float32`, `float64`, `complex64`, `complex128`, `byte`, `rune`, `string`, `bool`, `error`, `uintptr`, `any`), chroma.KeywordType),
			rule(`\d+i`, chroma.LiteralNumber),
			rule(`\d+\.\d*([Ee][-+]\d+)?i`, chroma.LiteralNumber),
			rule(`\.\d+([Ee][-+]\d+)?i`, chroma.LiteralNumber),
			rule(`\d+[Ee][-+]\d+i`, chroma.LiteralNumber),
			rule(`\d+(\.\d+[eE][+\-]?\d+|\.\d*|[eE][+\-]?\d+)`, chroma.LiteralNumberFloat),
			rule(`\.\d+([eE][+\-]?\d+)?`, chroma.LiteralNumberFloat),
			rule(`0[0-7]+`, chroma.LiteralNumberOct),
			rule(`0[xX][0-9a-fA-F_]+`, chroma.LiteralNumberHex),
			rule(`0b[01_]+`, chroma.LiteralNumberBin),
			rule(`(0|[1-9][0-9_]*)`, chroma.LiteralNumberInteger),
			rule(`'(\\['"\\abfnrtv]|\\x[0-9a-fA-F]{2}|\\[0-7]{1,3}|\\u[0-9a-fA-F]{4}|\\U[0-9a-fA-F]{8}|[^\\])'`, chroma.LiteralStringChar),
			rule("`[^`]*`", chroma.LiteralString),
			rule(`"(\\\\|\\"|[^"])*"`, chroma.LiteralString),
			rule(`(<<=|>>=|<<|>>|<=|>=|&\^=|&\^|\+=|-=|\*=|/=|%=|&=|\|=|&&|\|\||<-|\+\+|--|==|!=|:=|\.\.\.|[+\-*/%&])`, chroma.Operator),
			rule(`([a-zA-Z_]\w*)(\s*)(\()`, chroma.ByGroups(chroma.NameFunction, chroma.UsingSelf("root"), chroma.Punctuation)),
			rule(`[|^<>=!()\[\]{}.,;:~]`, chroma.Punctuation),
			rule(`[^\W\d]\w*`, chroma.NameOther),
		},
	}
}

func markdownRules() chroma.Rules {
	return chroma.Rules{
		"root": {
			rule(`<!--[\w\W]*?-->`, chroma.CommentMultiline),
			rule(`^(#[^#].+\n)`, chroma.ByGroups(chroma.GenericHeading)),
			rule(`^(#{2,6}.+\n)`, chroma.ByGroups(chroma.GenericSubheading)),
			rule(`^(\s*)([*-] )(\[[ xX]\])( .+\n)`, chroma.ByGroups(chroma.Text, chroma.Keyword, chroma.Keyword, chroma.UsingSelf("inline"))),
			rule(`^(\s*)([*-])(\s)(.+\n)`, chroma.ByGroups(chroma.Text, chroma.Keyword, chroma.Text, chroma.UsingSelf("inline"))),
			rule(`^(\s*)([0-9]+\.)( .+\n)`, chroma.ByGroups(chroma.Text, chroma.Keyword, chroma.UsingSelf("inline"))),
			rule(`^(\s*>\s)(.+\n)`, chroma.ByGroups(chroma.Keyword, chroma.GenericEmph)),
			rule("^(```\\n)([\\w\\W]*?)(^```$)", chroma.ByGroups(chroma.String, chroma.Text, chroma.String)),
			rule("^(```)(\\w+)(\\n)([\\w\\W]*?)(^```$)",
				chroma.UsingByGroup(2, 4, chroma.String, chroma.String, chroma.String, chroma.Text, chroma.String)),
			chroma.Include("inline"),
		},
		"inline": {
			rule(`<!--[\w\W]*?-->`, chroma.CommentMultiline),
			rule(`\\.`, chroma.Text),
			rule(`(\s)(\*|_)((?:(?!\2).)*)(\2)((?=\W|\n))`, chroma.ByGroups(chroma.Text, chroma.GenericEmph, chroma.GenericEmph, chroma.GenericEmph, chroma.Text)),
			rule(`(\s)((\*\*|__).*?)\3((?=\W|\n))`, chroma.ByGroups(chroma.Text, chroma.GenericStrong, chroma.GenericStrong, chroma.Text)),
			rule(`(\s)(~~[^~]+~~)((?=\W|\n))`, chroma.ByGroups(chroma.Text, chroma.GenericDeleted, chroma.Text)),
			rule("`[^`]+`", chroma.LiteralStringBacktick),
			rule(`[@#][\w/:]+`, chroma.NameEntity),
			rule(`(!?\[)([^]]+)(\])(\()([^)]+)(\))`, chroma.ByGroups(chroma.Text, chroma.NameTag, chroma.Text, chroma.Text, chroma.NameAttribute, chroma.Text)),
			rule(`.|\n`, chroma.Text),
		},
	}
}

// rule is a chroma rule that does not change the lexer's state.
func rule(pattern string, emit chroma.Emitter) chroma.Rule {
	return chroma.Rule{Pattern: pattern, Type: emit}
}

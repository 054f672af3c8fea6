package task

import "golang.org/x/text/message"

// printer renders schema validation messages in English.
var printer = message.NewPrinter(message.MatchLanguage("en"))

package task

import (
	"sync"

	"golang.org/x/text/message"
)

// printer renders schema validation messages in English. It is made on
// the first message: every process of the binary runs this package's
// init, and few of them ever render one.
var printer = sync.OnceValue(func() *message.Printer { return message.NewPrinter(message.MatchLanguage("en")) })

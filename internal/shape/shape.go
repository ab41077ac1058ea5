package shape

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// MinBudget is the smallest budget Output accepts (smaller ones are raised
// to it): room for the closing line and a few lines of output.
const MinBudget = 1024

// ResultLabel is the line before the result in a text that has logs too,
// so that a model tells the program's result from what it printed.
const ResultLabel = "Result:"

// closingRoom is the room kept for the closing line and its newline.
const closingRoom = 512

// Shaped is the model text of one run.
type Shaped struct {
	// Text is what the model is shown: at most the budget, in bytes.
	Text string
	// Cut reports whether anything was left out of Text.
	Cut bool
}

// Output returns the model text of a run's logs and result (nil: none)
// within budget bytes (at least MinBudget). The logs come first, one per
// line; then, after ResultLabel when there are logs, the result: a JSON
// string raw, anything else as JSON indented by two spaces. A result that
// is not valid JSON is shown as text.
func Output(logs []string, result json.RawMessage, budget int) Shaped {
	budget = max(budget, MinBudget)
	result = bytes.TrimSpace(result)
	logText := strings.Join(logs, "\n")
	res := newResult(result)

	sep := 0 // the bytes between logs and result
	if len(logs) > 0 && res.present {
		sep = len("\n" + ResultLabel + "\n")
	}
	if full, ok := res.full(budget); ok && len(logText)+sep+len(full) <= budget {
		return Shaped{Text: join(logs, logText, res.present, full)}
	}

	room := budget - closingRoom - sep
	logRoom, resRoom := split(room, len(logText), res.size(), len(logs) > 0, res.present)
	var c cuts
	shownLogs := logText
	if len(logText) > logRoom {
		shownLogs = c.logs(logs, logRoom)
	}
	shownRes := ""
	if res.present {
		shownRes = res.shape(resRoom, &c)
	}
	text := join(logs, shownLogs, res.present, shownRes) + "\n" + c.closing(budget)
	return Shaped{Text: text, Cut: true}
}

// join puts the logs and the result together as Output describes.
func join(logs []string, logText string, hasResult bool, result string) string {
	switch {
	case !hasResult:
		return logText
	case len(logs) == 0:
		return result
	}
	return logText + "\n" + ResultLabel + "\n" + result
}

// split shares room between the logs and the result: a part that needs
// less than half gets what it needs, and the other the rest.
func split(room, logSize, resSize int, hasLogs, hasResult bool) (logRoom, resRoom int) {
	switch {
	case !hasResult:
		return room, 0
	case !hasLogs:
		return 0, room
	case resSize <= room/2:
		return room - resSize, resSize
	case logSize <= room/2:
		return logSize, room - logSize
	}
	return room / 2, room - room/2
}

// cuts records what was left out, for the closing line.
type cuts struct {
	lines      int // log lines left out
	lineBytes  int // bytes of log lines left out or cut
	items      int // array items left out
	keys       int // object keys left out
	strBytes   int // bytes of strings left out
	containers int // arrays and objects elided for depth
	whole      bool
	resultSize int
}

// closing is the one line that says what was cut and how to get less.
func (c *cuts) closing(budget int) string {
	var parts []string
	if c.lines > 0 || c.lineBytes > 0 {
		parts = append(parts, count(c.lines, "log line")+" ("+count(c.lineBytes, "byte")+")")
	}
	if c.whole {
		parts = append(parts, "the whole result ("+count(c.resultSize, "byte")+")")
	}
	if c.items > 0 {
		parts = append(parts, count(c.items, "array item"))
	}
	if c.keys > 0 {
		parts = append(parts, count(c.keys, "object key"))
	}
	if c.containers > 0 {
		parts = append(parts, count(c.containers, "nested value")+" past the depth shown")
	}
	if c.strBytes > 0 {
		parts = append(parts, count(c.strBytes, "byte")+" of strings")
	}
	what := strings.Join(parts, ", ")
	if what == "" {
		what = "part of the output"
	}
	return fmt.Sprintf("[output cut to the model budget of %d bytes: left out %s; the host has the whole value. "+
		"To see less, return a summary or a slice (items.slice(0, 20)) and log less.]", budget, what)
}

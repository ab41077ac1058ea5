package cli

import (
	"bytes"
	"encoding/json"
)

// writeJSON prints v as one JSON document and a newline, indented by two
// spaces when indent is set. Unlike json.Marshal it leaves <, > and &
// alone: the values printed are for people and models, who would read
// "Promise\u003cstring\u003e" for Promise<string>, never for an HTML page.
func writeJSON(s *stdio, v any, indent bool) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := s.out.Write(buf.Bytes())
	return err
}

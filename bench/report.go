package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// Report is one run: what it ran on, how it was sized, what it measured.
type Report struct {
	Version string // ptcx's
	Machine Machine
	Params  Params
	When    time.Time
	Results []Result
}

// Impls are the implementations in the report, in the order first seen.
func (r Report) Impls() []string {
	var out []string
	for _, res := range r.Results {
		if !slices.Contains(out, res.Impl) {
			out = append(out, res.Impl)
		}
	}
	return out
}

// Write puts the report in dir (made if need be): results.jsonl (the JSON
// lines), report.md (Markdown) and one <workload>.svg chart per workload.
func (r Report) Write(dir string, workloads []Workload) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	var lines bytes.Buffer
	if err := WriteJSONLines(&lines, r.Results); err != nil {
		return err
	}
	files := map[string]string{"results.jsonl": lines.String(), "report.md": r.Markdown(workloads)}
	for _, w := range workloads {
		files[w.Name+".svg"] = r.SVG(w)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("bench: writing the report: %w", err)
		}
	}
	return nil
}

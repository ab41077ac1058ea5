package transpile

import (
	"encoding/json"
	"errors"
	"strings"
)

// segment maps a column of a generated line to a place in the source esbuild
// was given (0-based; line 0 is the wrapper's header).
type segment struct {
	genCol, line, col int
}

// parseMappings decodes the "mappings" of a version 3 source map with one
// source: one list of segments per generated line, in column order.
func parseMappings(sourceMap []byte) ([][]segment, error) {
	var m struct {
		Version  int    `json:"version"`
		Mappings string `json:"mappings"`
	}
	if err := json.Unmarshal(sourceMap, &m); err != nil {
		return nil, err
	}
	if m.Version != 3 {
		return nil, errors.New("source map: not version 3")
	}
	var (
		lines          [][]segment
		line, col, src int // running values across the whole map
	)
	for _, group := range strings.Split(m.Mappings, ";") {
		var segs []segment
		genCol := 0
		for _, field := range strings.Split(group, ",") {
			if field == "" {
				continue
			}
			v, err := decodeVLQ(field)
			if err != nil {
				return nil, err
			}
			genCol += v[0]
			if len(v) < 4 {
				continue // a generated column with no source
			}
			src += v[1]
			line += v[2]
			col += v[3]
			segs = append(segs, segment{genCol: genCol, line: line, col: col})
		}
		lines = append(lines, segs)
	}
	_ = src
	return lines, nil
}

const base64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// decodeVLQ decodes the base64 VLQ numbers of one segment.
func decodeVLQ(s string) ([]int, error) {
	var out []int
	value, shift := 0, 0
	for i := 0; i < len(s); i++ {
		d := strings.IndexByte(base64Digits, s[i])
		if d < 0 {
			return nil, errors.New("source map: bad VLQ digit")
		}
		value += (d & 31) << shift
		if d&32 != 0 {
			shift += 5
			if shift > 30 {
				return nil, errors.New("source map: VLQ number too large")
			}
			continue
		}
		n := value >> 1
		if value&1 != 0 {
			n = -n
		}
		out = append(out, n)
		value, shift = 0, 0
	}
	if shift != 0 {
		return nil, errors.New("source map: truncated VLQ number")
	}
	return out, nil
}

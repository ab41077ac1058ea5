package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// BenchmarkDecodeToolResults_strict compares decoding a tool_results body
// with the strict check (decodeStrict: strictjson.Check, then the decoder)
// against the decoder alone, as serve decoded before the check, in the
// same run: a typical 1 KiB body and a 1 MiB one (a client's result of
// 8,000 records). It reports each one's µs/op and the ratio strict/plain.
func BenchmarkDecodeToolResults_strict(b *testing.B) {
	for _, size := range []struct {
		name    string
		records int
	}{{"1KiB", 10}, {"1MiB", 9600}} {
		body := toolResultsBody(size.records)
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			var plain, strict time.Duration
			for b.Loop() {
				began := time.Now()
				var req ToolResultsRequest
				dec := json.NewDecoder(bytes.NewReader(body))
				dec.DisallowUnknownFields()
				if err := dec.Decode(&req); err != nil {
					b.Fatal(err)
				}
				plain += time.Since(began)

				began = time.Now()
				if _, err := DecodeToolResults(body); err != nil {
					b.Fatal(err)
				}
				strict += time.Since(began)
			}
			b.ReportMetric(float64(len(body)), "body-bytes")
			b.ReportMetric(float64(plain.Microseconds())/float64(b.N), "plain-µs/op")
			b.ReportMetric(float64(strict.Microseconds())/float64(b.N), "strict-µs/op")
			b.ReportMetric(strict.Seconds()/plain.Seconds(), "strict/plain")
		})
	}
}

// toolResultsBody is a tool_results body whose one result is an array of
// n records of a few typical fields each (about 130 bytes a record).
func toolResultsBody(n int) []byte {
	var v strings.Builder
	v.WriteString("[")
	for i := range n {
		if i > 0 {
			v.WriteString(",")
		}
		fmt.Fprintf(&v, `{"id":%d,"name":"customer %d","email":"c%d@example.com","score":%d.25,"active":true,"tags":["a","b\n"]}`, i, i, i, i%100)
	}
	v.WriteString("]")
	return []byte(`{"results":[{"id":"ex_1:ptc:1","ok":true,"value":` + v.String() + `}]}`)
}

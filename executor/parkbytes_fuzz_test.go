package executor_test

import (
	"testing"

	"github.com/ptcx/ptcx/executor"
)

// FuzzDecodeParked feeds the parked-execution decoder arbitrary bytes: it
// must refuse or accept them without panicking, allocating beyond the
// input, or stalling.
func FuzzDecodeParked(f *testing.F) {
	f.Add([]byte("PTCXPARK"))
	f.Add(executor.AssembleParked([]byte(`{"id":"x","scope":"s","tool":"run_code","args":{},"nonce":"n","limits":{},"calls":[{"id":1,"name":"a"}],"ledger":{"calls":[],"args":[]}}`), []byte("snap")))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = executor.DecodeParked(data, 1<<20)
	})
}

// FuzzDecodeParkedHeader frames arbitrary headers with a right checksum,
// so that the fuzzer reaches the header's decoder and checks.
func FuzzDecodeParkedHeader(f *testing.F) {
	f.Add([]byte(`{"id":"x","scope":"s","tool":"run_code","args":{},"nonce":"n","limits":{},"calls":[{"id":1,"name":"a"}],"ledger":{"calls":[],"args":[]}}`), []byte("snap"))
	f.Add([]byte(`{"ledger":{"calls":[{"tool":"t"}],"args":[null]},"calls":[{"id":-1}]}`), []byte(nil))
	f.Fuzz(func(t *testing.T, header, snap []byte) {
		_ = executor.DecodeParked(executor.AssembleParked(header, snap), 1<<20)
	})
}

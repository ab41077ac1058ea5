package wasmhost

import "github.com/ptcx/ptcx/wasmhost/internal/snapshot"

// MaxSnapshotMetaBytes (64 MiB) bounds the part of a snapshot that is not memory:
// the JSON of the run's table (the calls' arguments and answers, the logs,
// the timers). A run whose table is larger cannot be suspended ("the run
// could not be suspended: ..."), and a snapshot that declares more is
// refused before anything is inflated. The logs are at most the output
// limit (api.DefaultOutputBytes by default) and the arguments at most
// api.Limits.MaxInFlightArgBytes (api.DefaultMaxInFlightArgBytes); answers
// count too.
const MaxSnapshotMetaBytes = snapshot.MaxMetaBytes

// CompressSnapshot returns snapshot compressed with zstd: what a host that
// keeps suspended runs on disk or sends them away stores, several times
// smaller than what a run suspends to (Suspended.Snapshot, whose body is
// stored as is, so that suspending and resuming take well under a
// millisecond). Runtime.Resume reads both. A snapshot already compressed
// is returned as it is; one that is not a snapshot (its header, its body's
// size) is refused with ErrSnapshot. It does not check that the snapshot
// can be resumed: Resume does.
func CompressSnapshot(b []byte) ([]byte, error) { return snapshot.Compress(b) }

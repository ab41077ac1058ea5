package executor

import (
	"encoding/binary"

	"github.com/ptcx/ptcx/wasmhost"
)

// DecodeParked is decodeParked, for the format's tests and fuzz targets.
func DecodeParked(data []byte, limit int64) error {
	_, _, _, err := decodeParked(data, limit)
	return err
}

// DecodeParkedCalls is decodeParked's calls, as its header names them
// (id and tool) and as its snapshot holds them.
func DecodeParkedCalls(data []byte, limit int64) (header []ParkedCall, snapshot []wasmhost.PendingCall, err error) {
	h, _, calls, err := decodeParked(data, limit)
	if err != nil {
		return nil, nil, err
	}
	for _, c := range h.Calls {
		pc := ParkedCall{ID: c.ID, Tool: c.Name, Args: c.Args, Kind: ParkedTool}
		if a := c.Approval; a != nil {
			pc.Kind, pc.Reason, pc.Label = ParkedApproval, a.Reason, a.Label
		}
		header = append(header, pc)
	}
	return header, calls, nil
}

// AssembleParked frames a header and a snapshot as Marshal does (of the
// newest version), with a right checksum: the fuzz target over the
// header's decoder.
func AssembleParked(header, snapshot []byte) []byte {
	return frameParked(ParkedVersion, header, snapshot)
}

// AssembleParkedVersion is AssembleParked of a given version.
func AssembleParkedVersion(version uint32, header, snapshot []byte) []byte {
	return frameParked(version, header, snapshot)
}

// SplitParked is a parked execution's header and snapshot, as Marshal
// framed them (the input is assumed well formed).
func SplitParked(data []byte) (header, snapshot []byte) {
	hlen := binary.BigEndian.Uint32(data[len(parkedMagic)+4:])
	rest := data[len(parkedMagic)+8:]
	header, rest = rest[:hlen], rest[hlen:]
	slen := binary.BigEndian.Uint64(rest)
	return header, rest[8 : 8+slen]
}

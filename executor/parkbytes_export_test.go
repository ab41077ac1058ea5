package executor

import "github.com/ptcx/ptcx/wasmhost"

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
		header = append(header, ParkedCall{ID: c.ID, Tool: c.Name, Args: c.Args})
	}
	return header, calls, nil
}

// AssembleParked frames a header and a snapshot as Marshal does, with a
// right checksum: the fuzz target over the header's decoder.
func AssembleParked(header, snapshot []byte) []byte {
	return frameParked(header, snapshot)
}

package executor

// DecodeParked is decodeParked, for the format's tests and fuzz targets.
func DecodeParked(data []byte, limit int64) error {
	_, _, err := decodeParked(data, limit)
	return err
}

// AssembleParked frames a header and a snapshot as Marshal does, with a
// right checksum: the fuzz target over the header's decoder.
func AssembleParked(header, snapshot []byte) []byte {
	return frameParked(header, snapshot)
}

package meter

import "fmt"

// malformed returns the error for a module that is malformed at byte offset
// off of the input.
func malformed(off int, format string, args ...any) error {
	return fmt.Errorf("meter: malformed module at offset %d: %s", off, fmt.Sprintf(format, args...))
}

// unsupported returns the error for an instruction this package does not
// decode, at byte offset off of the input.
func unsupported(off int, opcode string) error {
	return fmt.Errorf("meter: unsupported opcode %s at offset %d", opcode, off)
}

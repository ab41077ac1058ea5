package meter

// WritesTables reports whether the code of the wasm binary module can
// change a table or an element segment at run time: whether it holds a
// table.set, table.init, elem.drop, table.copy, table.grow or table.fill.
// A module without any keeps its tables as instantiation left them, so an
// instance whose memory and globals are reset is as new (wasmhost reuses
// such instances). It decodes the module as Instrument does, opt naming
// the import Instrument calls (metered or not, the answer is the same: the
// instrumentation writes no table).
func WritesTables(wasm []byte, opt Options) (bool, error) {
	m, err := decodeModule(wasm, opt.Module, opt.Name)
	if err != nil {
		return false, err
	}
	return m.tableWrites > 0, nil
}

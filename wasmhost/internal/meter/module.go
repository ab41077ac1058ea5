package meter

import "fmt"

// Section ids of the binary format.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secTable     = 4
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secStart     = 8
	secElement   = 9
	secCode      = 10
	secData      = 11
	secDataCount = 12
	secTag       = 13
)

// sectionRank gives the position of each known non-custom section id in the
// order the binary format requires; 0 for custom sections and unknown ids.
var sectionRank = [...]int{
	secType: 1, secImport: 2, secFunction: 3, secTable: 4, secMemory: 5, secTag: 6,
	secGlobal: 7, secExport: 8, secStart: 9, secElement: 10, secDataCount: 11,
	secCode: 12, secData: 13,
}

// sectionNames names the known section ids for error messages.
var sectionNames = [...]string{
	secCustom: "custom", secType: "type", secImport: "import", secFunction: "function",
	secTable: "table", secMemory: "memory", secGlobal: "global", secExport: "export",
	secStart: "start", secElement: "element", secCode: "code", secData: "data",
	secDataCount: "data count", secTag: "tag",
}

// sectionName describes section id for error messages.
func sectionName(id byte) string {
	if int(id) < len(sectionNames) {
		return fmt.Sprintf("%d (%s)", id, sectionNames[id])
	}
	return fmt.Sprintf("%d", id)
}

// meteredSection names the custom section Instrument adds to its output.
const meteredSection = "ptcx.metered"

// header is the magic number and version of a binary module.
const header = "\x00asm\x01\x00\x00\x00"

// section is where one section lies in the input.
type section struct {
	id    byte
	start int // offset of the id byte
	body  int // offset of the contents, past the size
	end   int // offset just past the contents
}

// funcBody is where one code-section entry lies in the input.
type funcBody struct {
	start  int    // offset of the body, past its size
	groups int    // offset of the first local declaration, past their count
	code   int    // offset of the first instruction, past the local declarations
	end    int    // offset just past the body
	loops  int    // index in module.loops of the body's first loop
	bulk   int    // index in module.bulk of the body's first bulk-memory instruction
	decls  uint32 // local declarations (groups of locals of one type)
	locals uint64 // locals declared, at most 2^32-1
}

// funcType is a function type; params and results are value type bytes in
// the input.
type funcType struct {
	params, results []byte
}

// module is what Instrument needs to know about its input.
type module struct {
	buf      []byte
	sections []section
	types    []funcType

	funcImports   uint32 // imported functions
	globalImports uint32 // imported globals
	funcs         uint32 // entries of the function section
	globals       uint32 // entries of the global section

	// The first function import named by Options: its function index and
	// type index, and the offset of the import entry.
	pollFound bool
	pollIndex uint32
	pollType  uint32
	pollOff   int

	metered   bool       // the input has a ptcx.metered custom section
	funcTypes []uint32   // type index of every defined function, from the function section
	bodies    []funcBody // code-section entries
	loops     []int      // offsets just past the block type of every loop, in order
	bulk      []int      // offsets of the 0xfc prefix of every memory.init, memory.copy and memory.fill, in order
	// tableWrites counts the code's instructions that can change a table
	// (sites.tableWrites).
	tableWrites int
}

// decodeModule decodes wasm, looking for the function import modName.name.
func decodeModule(wasm []byte, modName, name string) (*module, error) {
	m := &module{buf: wasm}
	r := &reader{buf: wasm, end: len(wasm)}
	switch {
	case len(wasm) >= len(header) && string(wasm[:len(header)]) == header:
	case len(wasm) < len(header) && string(wasm) == header[:len(wasm)]:
		return nil, malformed(len(wasm), "unexpected end reading the header")
	case len(wasm) >= len(header) && string(wasm[:4]) == header[:4]:
		return nil, malformed(4, "unsupported version % x", wasm[4:8])
	default:
		return nil, malformed(0, "not a wasm binary module (bad magic number)")
	}
	r.pos = len(header)
	lastRank := 0
	var sawCode bool
	for r.pos < r.end {
		s := section{start: r.pos}
		id, _ := r.byte("section id")
		s.id = id
		size, err := r.u32("section size")
		if err != nil {
			return nil, err
		}
		s.body = r.pos
		if uint64(size) > uint64(r.end-r.pos) {
			return nil, malformed(s.start, "section %s of %d bytes runs past the end (%d bytes left)", sectionName(id), size, r.end-r.pos)
		}
		s.end = r.pos + int(size)
		if id != secCustom {
			if int(id) >= len(sectionRank) || sectionRank[id] == 0 {
				return nil, malformed(s.start, "unknown section id %d", id)
			}
			if sectionRank[id] <= lastRank {
				return nil, malformed(s.start, "section %s is out of order or repeated", sectionName(id))
			}
			lastRank = sectionRank[id]
		}
		sr := &reader{buf: wasm, pos: s.body, end: s.end}
		switch id {
		case secCustom:
			err = m.custom(sr)
		case secType:
			err = m.typeSection(sr)
		case secImport:
			err = m.importSection(sr, modName, name)
		case secFunction:
			err = m.functionSection(sr)
		case secTable:
			err = vec(sr, "table count", sr.tableType)
		case secMemory:
			err = vec(sr, "memory count", sr.limits)
		case secTag:
			err = vec(sr, "tag count", sr.tagType)
		case secGlobal:
			err = m.globalSection(sr)
		case secExport:
			err = vec(sr, "export count", sr.export)
		case secStart:
			_, err = sr.u32("start function")
		case secElement:
			err = vec(sr, "element segment count", sr.elementSegment)
		case secDataCount:
			_, err = sr.u32("data count")
		case secCode:
			sawCode = true
			err = m.codeSection(sr)
		case secData:
			err = vec(sr, "data segment count", sr.dataSegment)
		}
		if err != nil {
			return nil, err
		}
		if id != secCustom && sr.pos != s.end {
			return nil, malformed(sr.pos, "section %s has %d bytes past its contents", sectionName(id), s.end-sr.pos)
		}
		m.sections = append(m.sections, s)
		r.pos = s.end
	}
	if !sawCode && m.funcs != 0 {
		return nil, malformed(len(wasm), "%d functions declared but no code section", m.funcs)
	}
	return m, nil
}

// vec reads a u32 count (what names it) and calls item that many times.
// Every item takes at least one byte, which bounds the count before any work
// is done.
func vec(r *reader, what string, item func() error) error {
	n, err := vecCount(r, what)
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := item(); err != nil {
			return err
		}
	}
	return nil
}

// vecCount reads the count of a vector (what names it) whose items take at
// least one byte each, checking that many bytes remain.
func vecCount(r *reader, what string) (uint32, error) {
	off := r.pos
	n, err := r.u32(what)
	if err != nil {
		return 0, err
	}
	if uint64(n) > uint64(r.end-r.pos) {
		return 0, malformed(off, "%s %d cannot fit in %d bytes", what, n, r.end-r.pos)
	}
	return n, nil
}

package meter

import (
	"fmt"
	"slices"
)

// Exempt names one loop of a module to leave without a check: the
// innermost loop around the one br_table of at least MinTargets labels in
// the function the name section calls Func. It is meant for the bytecode
// dispatch loop of an interpreter that counts its own backward jumps and
// calls and polls the same import (QuickJS-NG's JS_CallInternal, whose
// dispatch br_table has over 200 labels): that loop turns once per
// bytecode, and the check at its header is most of the meter's cost.
//
// The loop is identified exactly or not at all. When the module has no
// name section, no function of that name (or more than one), no br_table
// of at least MinTargets labels in it, more than one, or none inside a
// loop, nothing is exempted and every loop is instrumented as without
// Exempt; Report says which, and why. The zero value exempts nothing.
type Exempt struct {
	Func       string // the function's name in the name section
	MinTargets uint32 // the br_table's labels, the default one included; must be >= 2 when Func is set
}

// Report says what Instrument did.
type Report struct {
	Loops int // loop headers given a check

	// Exempted says whether Options.Exempt's loop was found and left
	// without a check; ExemptFunc is then the function's index and
	// ExemptLoop the offset in the input of the loop's opcode. When
	// Options.Exempt is set and the loop was not exempted, NotExempted
	// says why.
	Exempted    bool
	ExemptFunc  uint32
	ExemptLoop  int
	NotExempted string
}

// nameSection is the custom section holding names.
const nameSection = "name"

// subFuncNames is the name section's subsection of function names.
const subFuncNames = 1

// findExempt returns the offset, in m.loops' terms (just past the block
// type), of the loop ex names, the function's index and the loop opcode's
// offset; or a reason it is not exempted.
func findExempt(m *module, ex Exempt) (site int, fn uint32, loopOff int, why string) {
	switch {
	case m.nameSections == 0:
		return 0, 0, 0, "the module has no name section"
	case m.nameSections > 1:
		return 0, 0, 0, fmt.Sprintf("the module has %d name sections", m.nameSections)
	}
	idx, why := funcByName(m, ex.Func)
	if why != "" {
		return 0, 0, 0, why
	}
	if idx < m.funcImports {
		return 0, 0, 0, fmt.Sprintf("function %q (%d) is imported", ex.Func, idx)
	}
	b := m.bodies[idx-m.funcImports]
	r := &reader{buf: m.buf, pos: b.code, end: b.end}
	tables, err := brTables(r, ex.MinTargets)
	if err != nil { // decoded once already: cannot happen
		return 0, 0, 0, err.Error()
	}
	switch {
	case len(tables) == 0:
		return 0, 0, 0, fmt.Sprintf("function %q (%d) has no br_table of %d labels or more", ex.Func, idx, ex.MinTargets)
	case len(tables) > 1:
		return 0, 0, 0, fmt.Sprintf("function %q (%d) has %d br_tables of %d labels or more, at offsets %v", ex.Func, idx, len(tables), ex.MinTargets, offsets(tables))
	case tables[0].loop < 0:
		return 0, 0, 0, fmt.Sprintf("the br_table at offset %d of function %q (%d) is in no loop", tables[0].at, ex.Func, idx)
	}
	loopOff = tables[0].loop
	r = &reader{buf: m.buf, pos: loopOff + 1, end: b.end}
	_ = r.blockType() // decoded before
	return r.pos, idx, loopOff, ""
}

// funcByName returns the index of the one function the name section calls
// name, or why there is none.
func funcByName(m *module, name string) (uint32, string) {
	s := m.sections[m.names]
	r := &reader{buf: m.buf, pos: s.body, end: s.end}
	_, _ = r.name("custom section name") // decoded before
	var found []uint32
	for r.pos < r.end {
		id, err := r.byte("name subsection id")
		if err != nil {
			return 0, "the name section is malformed: " + err.Error()
		}
		size, err := r.u32("name subsection size")
		if err != nil {
			return 0, "the name section is malformed: " + err.Error()
		}
		if uint64(size) > uint64(r.end-r.pos) {
			return 0, fmt.Sprintf("the name section is malformed: subsection %d of %d bytes runs past its end", id, size)
		}
		end := r.pos + int(size)
		if id == subFuncNames {
			sr := &reader{buf: m.buf, pos: r.pos, end: end}
			err := vec(sr, "function name count", func() error {
				i, err := sr.u32("function index")
				if err != nil {
					return err
				}
				n, err := sr.name("function name")
				if err == nil && n == name {
					found = append(found, i)
				}
				return err
			})
			if err != nil {
				return 0, "the name section is malformed: " + err.Error()
			}
		}
		r.pos = end
	}
	switch {
	case len(found) == 0:
		return 0, fmt.Sprintf("the name section names no function %q", name)
	case len(found) > 1:
		return 0, fmt.Sprintf("the name section names %d functions %q", len(found), name)
	}
	if uint64(found[0]) >= uint64(m.funcImports)+uint64(len(m.bodies)) {
		return 0, fmt.Sprintf("the name section names function %d %q, but the module has %d functions", found[0], name, uint64(m.funcImports)+uint64(len(m.bodies)))
	}
	return found[0], ""
}

// brTable is a br_table found by brTables.
type brTable struct {
	at   int // offset of its opcode
	loop int // offset of the opcode of the innermost loop around it; -1 for none
}

// offsets lists where tables are, for a message.
func offsets(tables []brTable) []int {
	var o []int
	for _, t := range tables {
		o = append(o, t.at)
	}
	return o
}

// brTables decodes an expression from r.pos (a function body's first
// instruction) and returns its br_tables of at least min labels, the default
// one included, with the innermost loop around each.
func brTables(r *reader, min uint32) ([]brTable, error) {
	var found []brTable
	open := []int{-1} // per open block, the offset of the innermost loop around its contents; the body is in none
	for {
		if r.pos >= r.end {
			return nil, r.errorf(r.pos, "unexpected end of expression")
		}
		off := r.pos
		op := r.buf[r.pos]
		r.pos++
		imm := opcodes[op]
		switch imm {
		case immBad:
			return nil, unsupported(off, unsupportedName(op))
		case immEnd:
			open = open[:len(open)-1]
			if len(open) == 0 {
				return found, nil
			}
			continue
		case immNone:
			continue
		case immPrefixFC:
			if _, err := r.prefixFC(off); err != nil {
				return nil, err
			}
			continue
		case immBrTable:
			n, err := r.u32("br_table length")
			if err != nil {
				return nil, err
			}
			r.pos = off + 1 // immediates reads the length again
			if uint64(n)+1 >= uint64(min) {
				found = append(found, brTable{at: off, loop: open[len(open)-1]})
			}
		}
		if err := r.immediates(imm, off); err != nil {
			return nil, err
		}
		switch imm {
		case immBlock:
			open = append(open, open[len(open)-1])
		case immLoop:
			open = append(open, off)
		}
	}
}

// exempt removes the loop whose check would go at site from m.loops, so
// that the emitter leaves it as it is.
func (m *module) exempt(site int) {
	i, ok := slices.BinarySearch(m.loops, site)
	if !ok {
		return
	}
	m.loops = slices.Delete(m.loops, i, i+1)
	for j := range m.bodies {
		if m.bodies[j].loops > i {
			m.bodies[j].loops--
		}
	}
}

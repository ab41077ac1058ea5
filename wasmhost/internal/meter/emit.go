package meter

import (
	"fmt"
	"math"
)

// emitter writes the instrumented module.
type emitter struct {
	m         *module
	check     []byte // inserted at each loop header
	interval  int32
	bulkBytes uint32   // for the ptcx.metered section
	charges   [][]byte // per body, inserted before each bulk-memory instruction; nil for none (and no new local)
	out       []byte
}

// emit returns the instrumented module: the input's sections in order, with
// the global section extended (or created right before the first section
// that must follow it), the code section rewritten, and the ptcx.metered
// custom section last. Every other section is copied byte for byte.
func (e *emitter) emit() ([]byte, error) {
	m := e.m
	// The checks, longer body sizes, the counter global and the custom section.
	grow := len(m.loops)*len(e.check) + 4*len(m.bodies) + 64
	for i, c := range e.charges {
		if c != nil {
			grow += e.bulkIn(i)*len(c) + 7 // the charges, a local, a longer count
		}
	}
	e.out = make([]byte, 0, len(m.buf)+grow)
	e.out = append(e.out, m.buf[:len(header)]...)
	globalDone := false
	for _, s := range m.sections {
		if !globalDone && s.id != secCustom && sectionRank[s.id] > sectionRank[secGlobal] {
			e.newGlobalSection()
			globalDone = true
		}
		switch s.id {
		case secGlobal:
			e.globalSection(s)
			globalDone = true
		case secCode:
			if err := e.codeSection(s); err != nil {
				return nil, err
			}
		default:
			e.out = append(e.out, m.buf[s.start:s.end]...)
		}
	}
	if !globalDone {
		e.newGlobalSection()
	}
	c := meteredContents(uint32(e.interval), e.bulkBytes)
	e.out = appendU32(append(e.out, secCustom), uint32(len(c)))
	e.out = append(e.out, c...)
	return e.out, nil
}

// counterGlobal returns the new global: a mutable i32 initialised to the
// interval.
func (e *emitter) counterGlobal() []byte {
	g := []byte{0x7f, 0x01, 0x41}
	g = appendS32(g, e.interval)
	return append(g, 0x0b)
}

// newGlobalSection appends a global section holding only the counter.
func (e *emitter) newGlobalSection() {
	g := e.counterGlobal()
	e.out = appendU32(append(e.out, secGlobal), uint32(1+len(g)))
	e.out = append(append(e.out, 1), g...)
}

// globalSection appends s, a global section, with the counter added last.
func (e *emitter) globalSection(s section) {
	r := &reader{buf: e.m.buf, pos: s.body, end: s.end}
	n, _ := r.u32("global count") // decoded before
	rest := e.m.buf[r.pos:s.end]
	g := e.counterGlobal()
	size := sizeU32(n+1) + len(rest) + len(g)
	e.out = appendU32(append(e.out, secGlobal), uint32(size))
	e.out = appendU32(e.out, n+1)
	e.out = append(e.out, rest...)
	e.out = append(e.out, g...)
}

// planCharges prepares the charge of every function body that holds
// bulk-memory instructions, checking that the body can take one more local.
func (e *emitter) planCharges(global, poll uint32, shift uint8) error {
	m := e.m
	e.charges = make([][]byte, len(m.bodies))
	for i, b := range m.bodies {
		if e.bulkIn(i) == 0 {
			continue
		}
		ti := m.funcTypes[i] // as many bodies as functions, checked before
		if uint64(ti) >= uint64(len(m.types)) {
			return fmt.Errorf("meter: function %d (body at offset %d) has type index %d, but the module has %d types",
				uint64(m.funcImports)+uint64(i), b.start, ti, len(m.types))
		}
		// The new local's index, and the number of locals, must fit in a u32.
		local := uint64(len(m.types[ti].params)) + b.locals
		if local >= math.MaxUint32 || b.decls == math.MaxUint32 {
			return fmt.Errorf("meter: function %d (body at offset %d) has %d parameters and locals, too many to add one",
				uint64(m.funcImports)+uint64(i), b.start, local)
		}
		e.charges[i] = chargeCode(global, poll, uint32(local), shift, e.interval)
	}
	return nil
}

// bodySize returns the size of body i in the output.
func (e *emitter) bodySize(i int) uint64 {
	b := e.m.bodies[i]
	n := uint64(b.end-b.start) + uint64(e.loopsIn(i)*len(e.check))
	if e.charges != nil && e.charges[i] != nil {
		// The declaration count is re-encoded, in the shortest form, one
		// more, and one declaration (1 i32) is added.
		n = n - uint64(b.groups-b.start) + uint64(sizeU32(b.decls+1)) + 2
		n += uint64(e.bulkIn(i) * len(e.charges[i]))
	}
	return n
}

// codeSection appends s, the code section, with the check inserted at every
// loop header and, in each body given a local, the charge before every
// bulk-memory instruction.
func (e *emitter) codeSection(s section) error {
	m := e.m
	r := &reader{buf: m.buf, pos: s.body, end: s.end}
	_, _ = r.u32("code count") // decoded before
	countBytes := m.buf[s.body:r.pos]
	size := uint64(len(countBytes))
	for i, b := range m.bodies {
		n := e.bodySize(i)
		if n > math.MaxUint32 {
			return fmt.Errorf("meter: function body %d at offset %d would grow past 4 GiB", i, b.start)
		}
		size += uint64(sizeU32(uint32(n))) + n
	}
	if size > math.MaxUint32 {
		return fmt.Errorf("meter: the code section would grow past 4 GiB")
	}
	e.out = appendU32(append(e.out, secCode), uint32(size))
	e.out = append(e.out, countBytes...)
	for i, b := range m.bodies {
		e.out = appendU32(e.out, uint32(e.bodySize(i)))
		loops := m.loops[b.loops : b.loops+e.loopsIn(i)]
		var charge []byte
		if e.charges != nil {
			charge = e.charges[i]
		}
		if charge == nil {
			prev := b.start
			for _, at := range loops {
				e.out = append(e.out, m.buf[prev:at]...)
				e.out = append(e.out, e.check...)
				prev = at
			}
			e.out = append(e.out, m.buf[prev:b.end]...)
			continue
		}
		e.out = appendU32(e.out, b.decls+1)
		e.out = append(e.out, m.buf[b.groups:b.code]...)
		e.out = append(e.out, 0x01, 0x7f) // one i32
		bulk := m.bulk[b.bulk : b.bulk+e.bulkIn(i)]
		prev := b.code
		// Merge the two ordered lists; a loop whose first instruction is a
		// bulk-memory one has its check first.
		for len(loops) > 0 || len(bulk) > 0 {
			var at int
			var code []byte
			if len(bulk) == 0 || len(loops) > 0 && loops[0] <= bulk[0] {
				at, code, loops = loops[0], e.check, loops[1:]
			} else {
				at, code, bulk = bulk[0], charge, bulk[1:]
			}
			e.out = append(e.out, m.buf[prev:at]...)
			e.out = append(e.out, code...)
			prev = at
		}
		e.out = append(e.out, m.buf[prev:b.end]...)
	}
	return nil
}

// loopsIn returns the number of loops in body i.
func (e *emitter) loopsIn(i int) int {
	m := e.m
	if i+1 < len(m.bodies) {
		return m.bodies[i+1].loops - m.bodies[i].loops
	}
	return len(m.loops) - m.bodies[i].loops
}

// bulkIn returns the number of bulk-memory instructions in body i.
func (e *emitter) bulkIn(i int) int {
	m := e.m
	if i+1 < len(m.bodies) {
		return m.bodies[i+1].bulk - m.bodies[i].bulk
	}
	return len(m.bulk) - m.bodies[i].bulk
}

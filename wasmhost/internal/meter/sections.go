package meter

import "math"

// custom decodes a custom section's name; its contents are kept as they are.
func (m *module) custom(r *reader) error {
	name, err := r.name("custom section name")
	if err != nil {
		return err
	}
	if name == meteredSection {
		m.metered = true
	}
	return nil
}

// typeSection decodes the function types.
func (m *module) typeSection(r *reader) error {
	return vec(r, "type count", func() error {
		off := r.pos
		form, err := r.byte("type form")
		if err != nil {
			return err
		}
		if form != 0x60 {
			return malformed(off, "unsupported type form 0x%02x (only function types 0x60)", form)
		}
		var t funcType
		if t.params, err = r.valTypes("parameter count"); err != nil {
			return err
		}
		if t.results, err = r.valTypes("result count"); err != nil {
			return err
		}
		m.types = append(m.types, t)
		return nil
	})
}

// valTypes reads a vector of value types and returns its bytes.
func (r *reader) valTypes(what string) ([]byte, error) {
	n, err := vecCount(r, what)
	if err != nil {
		return nil, err
	}
	start := r.pos
	for i := uint32(0); i < n; i++ {
		if err := r.valType(); err != nil {
			return nil, err
		}
	}
	return r.buf[start:r.pos], nil
}

// importSection decodes the imports, counting imported functions and
// globals and finding the function import modName.name.
func (m *module) importSection(r *reader, modName, name string) error {
	return vec(r, "import count", func() error {
		off := r.pos
		mod, err := r.name("import module name")
		if err != nil {
			return err
		}
		field, err := r.name("import name")
		if err != nil {
			return err
		}
		kindOff := r.pos
		kind, err := r.byte("import kind")
		if err != nil {
			return err
		}
		switch kind {
		case 0x00: // function
			typeIdx, err := r.u32("import type index")
			if err != nil {
				return err
			}
			if !m.pollFound && mod == modName && field == name {
				m.pollFound, m.pollIndex, m.pollType, m.pollOff = true, m.funcImports, typeIdx, off
			}
			if m.funcImports == math.MaxUint32 {
				return malformed(off, "too many function imports")
			}
			m.funcImports++
		case 0x01:
			return r.tableType()
		case 0x02:
			return r.limits()
		case 0x03:
			if err := r.globalType(); err != nil {
				return err
			}
			if m.globalImports == math.MaxUint32 {
				return malformed(off, "too many global imports")
			}
			m.globalImports++
		case 0x04:
			return r.tagType()
		default:
			return malformed(kindOff, "unknown import kind 0x%02x", kind)
		}
		return nil
	})
}

// functionSection decodes the type indices of the defined functions.
func (m *module) functionSection(r *reader) error {
	n, err := vecCount(r, "function count")
	if err != nil {
		return err
	}
	m.funcTypes = make([]uint32, n)
	for i := range m.funcTypes {
		if m.funcTypes[i], err = r.u32("function type index"); err != nil {
			return err
		}
	}
	m.funcs = n
	return nil
}

// globalSection decodes the defined globals.
func (m *module) globalSection(r *reader) error {
	n, err := vecCount(r, "global count")
	if err != nil {
		return err
	}
	for i := uint32(0); i < n; i++ {
		if err := r.globalType(); err != nil {
			return err
		}
		if err := r.constExpr(); err != nil {
			return err
		}
	}
	m.globals = n
	return nil
}

// codeSection decodes every function body, recording where its local
// declarations, loops and bulk-memory instructions are.
func (m *module) codeSection(r *reader) error {
	off := r.pos
	n, err := vecCount(r, "code count")
	if err != nil {
		return err
	}
	if n != m.funcs {
		return malformed(off, "%d function bodies for %d declared functions", n, m.funcs)
	}
	m.bodies = make([]funcBody, 0, n)
	for i := uint32(0); i < n; i++ {
		sizeOff := r.pos
		size, err := r.u32("function body size")
		if err != nil {
			return err
		}
		if uint64(size) > uint64(r.end-r.pos) {
			return malformed(sizeOff, "function body %d of %d bytes runs past the end of the code section", i, size)
		}
		b := funcBody{start: r.pos, end: r.pos + int(size), loops: len(m.loops), bulk: len(m.bulk)}
		br := &reader{buf: r.buf, pos: b.start, end: b.end}
		if b.decls, b.groups, b.locals, err = br.locals(); err != nil {
			return err
		}
		b.code = br.pos
		s := sites{loops: m.loops, bulk: m.bulk}
		err = decodeExpr(br, &s)
		m.loops, m.bulk = s.loops, s.bulk
		m.tableWrites += s.tableWrites
		if err != nil {
			return err
		}
		if br.pos != b.end {
			return malformed(br.pos, "function body %d has %d bytes past its end", i, b.end-br.pos)
		}
		m.bodies = append(m.bodies, b)
		r.pos = b.end
	}
	return nil
}

// locals reads the local declarations of a function body. It returns their
// number, the offset of the first one (past their count) and the number of
// locals they declare.
func (r *reader) locals() (decls uint32, first int, total uint64, err error) {
	off := r.pos
	n, err := vecCount(r, "local declaration count")
	if err != nil {
		return 0, 0, 0, err
	}
	first = r.pos
	for i := uint32(0); i < n; i++ {
		count, err := r.u32("local count")
		if err != nil {
			return 0, 0, 0, err
		}
		if total += uint64(count); total > math.MaxUint32 {
			return 0, 0, 0, malformed(off, "more than 2^32-1 locals")
		}
		if err := r.valType(); err != nil {
			return 0, 0, 0, err
		}
	}
	return n, first, total, nil
}

// constExpr reads a constant expression (of a global, element or data
// segment). It holds no loops: the validator refuses any.
func (r *reader) constExpr() error {
	var s sites
	return decodeExpr(r, &s)
}

// globalType reads a value type and a mutability flag.
func (r *reader) globalType() error {
	if err := r.valType(); err != nil {
		return err
	}
	off := r.pos
	mut, err := r.byte("global mutability")
	if err != nil {
		return err
	}
	if mut > 1 {
		return malformed(off, "invalid global mutability 0x%02x", mut)
	}
	return nil
}

// tableType reads a reference type and limits.
func (r *reader) tableType() error {
	if err := r.refType(); err != nil {
		return err
	}
	return r.limits()
}

// limits reads a minimum and an optional maximum.
func (r *reader) limits() error {
	off := r.pos
	flags, err := r.byte("limits flags")
	if err != nil {
		return err
	}
	if flags > 1 {
		return malformed(off, "unsupported limits flags 0x%02x (shared or 64-bit memory)", flags)
	}
	if _, err := r.u32("limits minimum"); err != nil {
		return err
	}
	if flags == 1 {
		if _, err := r.u32("limits maximum"); err != nil {
			return err
		}
	}
	return nil
}

// tagType reads an exception tag: attribute 0 and a type index.
func (r *reader) tagType() error {
	off := r.pos
	attr, err := r.byte("tag attribute")
	if err != nil {
		return err
	}
	if attr != 0 {
		return malformed(off, "invalid tag attribute 0x%02x", attr)
	}
	_, err = r.u32("tag type index")
	return err
}

// export reads an export entry.
func (r *reader) export() error {
	if _, err := r.name("export name"); err != nil {
		return err
	}
	off := r.pos
	kind, err := r.byte("export kind")
	if err != nil {
		return err
	}
	if kind > 0x04 {
		return malformed(off, "unknown export kind 0x%02x", kind)
	}
	_, err = r.u32("export index")
	return err
}

// elementSegment reads an element segment in any of its eight encodings.
func (r *reader) elementSegment() error {
	off := r.pos
	flags, err := r.u32("element segment flags")
	if err != nil {
		return err
	}
	if flags > 7 {
		return malformed(off, "invalid element segment flags %d", flags)
	}
	// Bit 0: passive or declarative (bit 1 set) rather than active.
	// Bit 1: an explicit table index (active), or declarative (passive).
	// Bit 2: expressions and a reference type rather than function indices
	// and an element kind.
	active := flags&1 == 0
	if active && flags&2 != 0 {
		if _, err := r.u32("element table index"); err != nil {
			return err
		}
	}
	if active {
		if err := r.constExpr(); err != nil {
			return err
		}
	}
	exprs := flags&4 != 0
	if flags&3 != 0 { // the type is explicit unless active with table 0
		if exprs {
			if err := r.refType(); err != nil {
				return err
			}
		} else {
			kindOff := r.pos
			kind, err := r.byte("element kind")
			if err != nil {
				return err
			}
			if kind != 0 {
				return malformed(kindOff, "invalid element kind 0x%02x", kind)
			}
		}
	}
	if exprs {
		return vec(r, "element expression count", r.constExpr)
	}
	return vec(r, "element function index count", func() error {
		_, err := r.u32("element function index")
		return err
	})
}

// dataSegment reads a data segment: active in memory 0, passive, or active
// with a memory index.
func (r *reader) dataSegment() error {
	off := r.pos
	flags, err := r.u32("data segment flags")
	if err != nil {
		return err
	}
	switch flags {
	case 0:
	case 1:
	case 2:
		if _, err := r.u32("data memory index"); err != nil {
			return err
		}
	default:
		return malformed(off, "invalid data segment flags %d", flags)
	}
	if flags != 1 {
		if err := r.constExpr(); err != nil {
			return err
		}
	}
	n, err := r.u32("data segment length")
	if err != nil {
		return err
	}
	return r.skip(n, "data segment")
}

package transpile

import "strings"

// The pre-check's estimates of esbuild's super-linear work (see the budgets
// in limits.go).

// identInfo is what the checker knows of a name: its base's index in
// stats, and its keyword class if it is one.
type identInfo struct {
	base int32
	isKw bool
	kw   keyword
}

// baseStat aggregates the identifiers that share a base (the name without
// its trailing digits), which are the names esbuild's renamer can make
// collide: t tokens, u distinct names, a the sum of (scope depth + 4), b the
// sum of its square.
type baseStat struct{ t, u, a, b int64 }

// chargeFold charges the folds of a finished expression: each '+' or "${"
// may copy every literal of the expression (as UTF-16, which is no longer
// than the source), and a template's list of parts.
func (c *checker) chargeFold(lv *level) {
	c.foldWork += lv.foldOps * (lv.foldBytes + 8*lv.foldSubst)
	lv.foldOps, lv.foldSubst, lv.foldBytes = 0, 0, 0
}

// literalBytes bounds the length of t as a folded string: a literal's
// length (a number's text may grow, as "1e400" becomes "Infinity"), and 0
// for anything esbuild does not turn into a string.
func literalBytes(t *token) int64 {
	n := int64(t.end - t.start)
	switch t.kind {
	case tkString, tkTemplate, tkTemplateHead:
		return n
	case tkNumber:
		return n + 8
	case tkIdent:
		switch t.text {
		case "true", "false", "null", "undefined", "NaN", "Infinity":
			return n
		}
	}
	return 0
}

// lookup returns what is known of name, counting it as a distinct name of
// its base the first time.
func (c *checker) lookup(name string) identInfo {
	if in, ok := c.idents[name]; ok {
		return in
	}
	base := strings.TrimRight(name, "0123456789")
	i, ok := c.bases[base]
	if !ok {
		i = int32(len(c.stats))
		c.bases[base] = i
		c.stats = append(c.stats, baseStat{})
	}
	c.stats[i].u++
	in := identInfo{base: i}
	in.kw, in.isKw = keywords[name]
	c.idents[name] = in
	return in
}

// record counts an identifier of base i for the renamer estimate.
func (c *checker) record(i int32) {
	w := int64(c.sigma() + 4)
	st := &c.stats[i]
	st.t++
	st.a += w
	st.b += w * w
}

// renameWork bounds the renamer's probes: each binding at scope depth d
// probes at most 3 + u + (the same-base bindings in enclosing scopes)
// candidate names, each through at most d scopes; the enclosing same-base
// bindings are at most 2t (esbuild may add one per declaration) and at most
// u per scope.
func (c *checker) renameWork() int64 {
	var sum int64
	for _, st := range c.stats {
		sum += st.a*(3+st.u) + min(2*st.t*st.a, st.u*st.b)
	}
	return sum
}

func (c *checker) finish() error {
	for i := range c.stack {
		c.chargeFold(&c.stack[i])
	}
	for _, b := range []struct {
		what string
		max  int64
		got  int64
		hint string
	}{
		{"nesting work", maxDepthWork, c.depthWork, "it nests too deeply for its size; flatten it"},
		{"type-argument and conditional lookahead work", maxSpeculationWork, c.specWork, "split long chains of '<' comparisons or nested conditionals into statements"},
		{"renaming work", maxRenameWork, c.renameWork(), "use fewer shadowed or numbered names (x, x2, x3, …) in nested scopes"},
		{"string folding work", maxFoldWork, c.foldWork, "build long strings from an array with join, not a chain of '+'"},
		{"redeclaration work", maxRedeclareWork, c.redecl.work, "declare each name once per scope, and do not declare names again far from where they first appear"},
	} {
		if b.got > b.max {
			return &LimitError{Limit: b.what, Max: b.max, Got: b.got, Unit: "units", Hint: b.hint}
		}
	}
	return nil
}

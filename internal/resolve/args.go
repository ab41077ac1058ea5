package resolve

import (
	"encoding/json"

	"github.com/ptcx/ptcx/api"
)

// Args are a call's arguments, read once (ReadArgs): known to be one JSON
// object in which no object has a key twice. A flat object (flat.go) is
// kept as its text and its fields, and decoded only if something needs the
// map (Map): the quick check of a simple schema reads the fields
// (Definition.Validate), so the common nested call never decodes its
// arguments. The zero value is not read; Args is not safe for concurrent
// use (Map caches).
type Args struct {
	raw  json.RawMessage
	flat flatObject
	m    map[string]any // decoded: by ReadArgs unless flat, else by the first Map
}

// ReadArgs checks that raw is one JSON object, in which no object has a key
// twice, and reads it into a. Empty raw means {}. Anything else is
// INVALID_ARGS, as ParseArgs words it.
func ReadArgs(raw json.RawMessage, a *Args) *api.Error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	a.raw, a.m = raw, nil
	if scanFlat(raw, &a.flat) {
		return nil
	}
	m, err := parseArgs(raw)
	a.m = m
	return err
}

// Map returns the decoded arguments (the same map on every call: do not
// change it).
func (a *Args) Map() map[string]any {
	if a.m == nil {
		v, _ := decodeValid(a.raw, false) // flat: valid, no key twice
		a.m, _ = v.(map[string]any)
	}
	return a.m
}

// Lookup returns the decoded value of the top-level argument name, as Map
// has it, and whether the call gives it. Of a flat object it decodes that
// value alone, without the map.
func (a *Args) Lookup(name string) (any, bool) {
	if a.m == nil && a.flat.n >= 0 {
		if i := a.flat.find(a.raw, name); i >= 0 {
			f := a.flat.fields[i]
			v, _ := decodeValid(a.raw[f.vfrom:f.vto], false) // flat: a valid primitive
			return v, true
		}
		return nil, false
	}
	v, ok := a.Map()[name]
	return v, ok
}

// Has reports whether the call gives the top-level argument name, without
// decoding a flat object.
func (a *Args) Has(name string) bool {
	if a.m == nil && a.flat.n >= 0 {
		return a.flat.find(a.raw, name) >= 0
	}
	_, ok := a.Map()[name]
	return ok
}

// ValidJSON reports whether b is valid JSON, as json.Valid does, reading
// a small flat object in one pass (flat.go) and anything else through
// json.Valid.
func ValidJSON(b []byte) bool {
	var o flatObject
	return scanFlat(b, &o) || json.Valid(b)
}

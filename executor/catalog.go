package executor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"strconv"
	"strings"
	"sync"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/sdkgen"
)

// The bounds of a large tool set's catalog (sdkgen.Catalog), which a program's tools.$search and
// tools.$describe answer from inside the sandbox. An entry whose description, declaration and
// schemas are over catalogEntryBytes keeps its name and summary, and its declaration says why it
// has no more; so does every entry past catalogBytes of the whole catalog. Either way the tool
// stays callable (tools.$call) and $search still finds it by name and summary.
const (
	catalogEntryBytes = 64 << 10
	catalogBytes      = 4 << 20
	// catalogCacheSize bounds how many tool sets' catalogs are kept; past it the oldest goes.
	catalogCacheSize = 32
)

// catalogCache holds the JSON text of catalogs by a hash of their tool sets: a tool set's catalog
// is built on its first run, and later runs over the same tools (any scope, any executor) reuse
// it. Safe for concurrent use.
type catalogCache struct {
	mu    sync.Mutex
	seed  maphash.Seed
	byKey map[uint64]string
	order []uint64 // oldest first
}

var catalogs = &catalogCache{seed: maphash.MakeSeed(), byKey: map[uint64]string{}}

// catalogFor returns the catalog of bindable for the guest (wasmhost.Program.Catalog): its JSON
// text when the tool set is large (sdkgen.Deferred), else "".
func catalogFor(bindable []api.Schema) (string, error) {
	if !sdkgen.Deferred(bindable) {
		return "", nil
	}
	return catalogs.get(bindable)
}

func (c *catalogCache) get(tools []api.Schema) (string, error) {
	key := c.key(tools)
	c.mu.Lock()
	text, ok := c.byKey[key]
	c.mu.Unlock()
	if ok {
		return text, nil
	}
	text, err := buildCatalog(tools, catalogEntryBytes, catalogBytes)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byKey[key]; !ok {
		if len(c.order) >= catalogCacheSize {
			delete(c.byKey, c.order[0])
			c.order = c.order[1:]
		}
		c.byKey[key] = text
		c.order = append(c.order, key)
	}
	return text, nil
}

// key hashes everything a catalog is made of, each field length-prefixed.
func (c *catalogCache) key(tools []api.Schema) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	var n [8]byte
	field := func(b []byte) {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	for _, t := range tools {
		if t.Transport {
			continue
		}
		field([]byte(t.Name))
		field([]byte(t.Description))
		field(t.InputSchema)
		field(t.OutputSchema)
	}
	return h.Sum64()
}

// buildCatalog renders the catalog of tools, each entry within entryLimit bytes and all of them
// within totalLimit (entrySize).
func buildCatalog(tools []api.Schema, entryLimit, totalLimit int) (string, error) {
	entries, err := sdkgen.Catalog(tools)
	if err != nil {
		return "", err
	}
	total := 0
	for i := range entries {
		e := &entries[i]
		size := entrySize(e)
		switch {
		case size > entryLimit:
			shorten(e, fmt.Sprintf("its description, declaration and schemas (%d bytes) are over the catalog's limit of %d bytes for one tool", size, entryLimit))
		case total+size > totalLimit:
			shorten(e, fmt.Sprintf("the catalog reached its limit of %d bytes before this tool", totalLimit))
		}
		total += entrySize(e)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // declarations are full of < and >
	if err := enc.Encode(entries); err != nil {
		return "", err
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

// entrySize is what the bounds count of an entry: the bytes of its fields.
func entrySize(e *sdkgen.CatalogEntry) int {
	return len(e.Name) + len(e.Summary) + len(e.Description) + len(e.Declaration) + len(e.InputSchema) + len(e.OutputSchema)
}

// shorten leaves e its name and summary, and a declaration that says why.
func shorten(e *sdkgen.CatalogEntry, why string) {
	e.Description = e.Summary
	e.Declaration = "// " + e.Name + " is not described here: " + why + ". Call it with tools.$call(" +
		strconv.Quote(e.Name) + ", args), with the arguments its documentation gives.\n"
	e.InputSchema = json.RawMessage("null")
	e.OutputSchema = json.RawMessage("null")
}

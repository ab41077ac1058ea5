package executor

import (
	"hash/maphash"

	"github.com/ptcx/ptcx/api"
)

// The catalog's bounds and builder, for the tests of their edges.
const (
	CatalogEntryBytes = catalogEntryBytes
	CatalogBytes      = catalogBytes
	CatalogCacheSize  = catalogCacheSize
)

// BuildCatalog is buildCatalog with the bounds given.
func BuildCatalog(tools []api.Schema, entryLimit, totalLimit int) (string, error) {
	return buildCatalog(tools, entryLimit, totalLimit)
}

// CatalogFor is what run_code hands the guest for bindable.
func CatalogFor(bindable []api.Schema) (string, error) { return catalogFor(bindable) }

// CatalogCache is a cache of catalogs of its own.
type CatalogCache struct{ c *catalogCache }

func NewCatalogCache() CatalogCache {
	return CatalogCache{&catalogCache{seed: maphash.MakeSeed(), byKey: map[uint64]string{}}}
}

func (c CatalogCache) Get(tools []api.Schema) (string, error) { return c.c.get(tools) }

// Len is how many catalogs c holds.
func (c CatalogCache) Len() int {
	c.c.mu.Lock()
	defer c.c.mu.Unlock()
	return len(c.c.byKey)
}

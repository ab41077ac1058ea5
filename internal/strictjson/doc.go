// Package strictjson checks that JSON text means one thing to every
// reader before any reader decodes it: Check refuses, naming the place, an
// object with a key twice (encoding/json keeps the last, a policy or a
// person may read the first), text that is not UTF-8 and a \u escape of a
// lone surrogate (encoding/json turns both into U+FFFD without a word),
// and a number beyond float64's range (a JavaScript program would read
// Infinity). It refuses nesting deeper than MaxDepth, so that its cost is
// one pass over the text with a bounded stack.
//
// It is a leaf: it imports the standard library and internal/text only.
// ptcx serve checks every request body with it (serve/config.go,
// decodeStrict); the library refuses duplicate keys in tool arguments
// its own way (internal/resolve).
package strictjson

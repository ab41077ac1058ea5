// Package protocol is the wire of `ptcx serve` (docs/service.md,
// serve/openapi.yaml): the JSON bodies of its requests and answers, the
// error envelope, the events of a stream, and the names they carry
// (statuses, event types).
//
// It holds data only, so that a client links none of the server: it imports
// the standard library and api (the vocabulary, a leaf) and nothing else;
// a test holds it to that. Package serve names these types too (aliases), and
// serve/client speaks them.
package protocol

// Package jsonrpcline reads newline-delimited JSON-RPC, the framing of MCP
// over stdio, defensively: lines are bounded, and each is classified before
// the MCP SDK sees it, so that a peer writing garbage gets a precise answer
// (the server) or a precise cause (the bridge) instead of a dead session.
// It imports the MCP SDK's jsonrpc package only.
package jsonrpcline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// ErrTooLong means a line was longer than the limit.
var ErrTooLong = errors.New("line too long")

// Read returns the next line without its newline, at most max bytes. A
// longer line is consumed (up to its newline or the end of input) and
// ErrTooLong returned. At the end of input a last line without a newline is
// returned with the reader's error.
func Read(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+1 { // +1: the newline
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if tooLong {
			return nil, ErrTooLong
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

// Problem says why a line is not one JSON-RPC message.
type Problem int

const (
	// OK: the line is one JSON-RPC message.
	OK Problem = iota
	// NotJSON: the line is not JSON at all.
	NotJSON
	// Batch: a JSON array, a batch (MCP dropped batches in 2025-06-18).
	Batch
	// NotObject: JSON that is neither an object nor an array.
	NotObject
	// NotMessage: a JSON object that is not a JSON-RPC message.
	NotMessage
)

// Classify checks that line (trimmed, not empty) is one JSON-RPC message.
// For NotMessage, err says what the decoder refused.
func Classify(line []byte) (p Problem, err error) {
	_, p, err = Parse(line)
	return p, err
}

// Parse is Classify that also returns the message, when line is one.
func Parse(line []byte) (jsonrpc.Message, Problem, error) {
	switch {
	case !json.Valid(line):
		return nil, NotJSON, nil
	case line[0] == '[':
		return nil, Batch, nil
	case line[0] != '{':
		return nil, NotObject, nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, NotMessage, err
	}
	return msg, OK, nil
}

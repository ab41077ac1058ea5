package executor

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/ptcx/ptcx/api"
)

// A session store's bytes (session_store.go) are the session's program
// state (wasmhost's session bytes) behind a frame of what the executor
// keeps beside it: the session's context label (flow.go) and the handles
// its programs hold (handles.go), with their values.
//
//	version 1: "PTCXFLOW" | 1 | integrity | confidentiality | state
//	version 2: "PTCXFLOW" | 2 | integrity | confidentiality
//	           | handles length u32 (big-endian) | handles (JSON) | state
//	version 3: "PTCXFLOW" | 3 | integrity | confidentiality
//	           | language length u8 | language (its canonical name)
//	           | handles length u32 (big-endian) | handles (JSON, none when 0) | state
//
// A TypeScript session is written as before languages existed, so that
// older executors read it: bytes of a session whose label is the lowest
// and that holds no handle are the state alone, as before labels existed;
// a session that holds no handle is written as version 1, which every
// executor since labels reads; one that holds handles as version 2. A
// session of another language (Python) is written as version 3, which
// says its language; bytes of versions 1 and 2, and bare state, are a
// TypeScript session's. Nothing in the frame is trusted: the handles' length is checked
// against what is left before anything is allocated, and the handles as a
// parked execution's are (checkParkedHandles: the bounds, their names,
// labels and values, no name twice).

// sessionFrameMagic starts a session store's bytes that carry a frame.
const sessionFrameMagic = "PTCXFLOW"

// The versions of the frame.
const (
	sessionFrameLabel    = 1 // the label
	sessionFrameHandles  = 2 // the label and the handles
	sessionFrameLanguage = 3 // the label, the language and the handles
)

// sessionHead is what a session store's bytes carry beside the state.
type sessionHead struct {
	label   api.Label
	handles []parkedHandle // sorted by id; nil for none
	lang    api.Language   // canonical: TypeScript for frames without one
}

// frameSession returns state behind h's frame.
func frameSession(h sessionHead, state []byte) []byte {
	lang := h.lang.Canonical()
	typescript := lang == api.LanguageTypeScript
	if typescript && h.label.IsZero() && len(h.handles) == 0 {
		return state
	}
	var hs []byte
	version := byte(sessionFrameLabel)
	if len(h.handles) > 0 {
		version = sessionFrameHandles
		hs = marshal(h.handles)
	}
	if !typescript {
		version = sessionFrameLanguage
	}
	out := make([]byte, 0, len(sessionFrameMagic)+3+1+len(lang)+4+len(hs)+len(state))
	out = append(out, sessionFrameMagic...)
	out = append(out, version, byte(h.label.Integrity), byte(h.label.Confidentiality))
	if version == sessionFrameLanguage {
		out = append(out, byte(len(lang)))
		out = append(out, lang...)
	}
	if version != sessionFrameLabel {
		out = binary.BigEndian.AppendUint32(out, uint32(len(hs)))
		out = append(out, hs...)
	}
	return append(out, state...)
}

// unframeSession splits a session store's bytes into what the frame
// carries and the state, refusing a frame it cannot read.
func unframeSession(b []byte) (sessionHead, []byte, error) {
	if !bytes.HasPrefix(b, []byte(sessionFrameMagic)) {
		return sessionHead{lang: api.LanguageTypeScript}, b, nil
	}
	rest := b[len(sessionFrameMagic):]
	if len(rest) < 3 || rest[0] < sessionFrameLabel || rest[0] > sessionFrameLanguage {
		return sessionHead{}, nil, errors.New("its data-flow frame is truncated or of an unknown version")
	}
	h := sessionHead{label: api.Label{Integrity: api.Integrity(rest[1]), Confidentiality: api.Confidentiality(rest[2])},
		lang: api.LanguageTypeScript}
	if !h.label.Valid() {
		return sessionHead{}, nil, errors.New("its data-flow frame holds no label")
	}
	version := rest[0]
	rest = rest[3:]
	if version == sessionFrameLabel {
		return h, rest, nil
	}
	if version == sessionFrameLanguage {
		var err error
		if h.lang, rest, err = unframeLanguage(rest); err != nil {
			return sessionHead{}, nil, err
		}
	}
	if len(rest) < 4 {
		return sessionHead{}, nil, errors.New("its data-flow frame is truncated before its handles")
	}
	n := binary.BigEndian.Uint32(rest)
	rest = rest[4:]
	if uint64(n) > uint64(len(rest)) {
		return sessionHead{}, nil, fmt.Errorf("its data-flow frame's handles take %d bytes, more than the %d left", n, len(rest))
	}
	if n == 0 && version == sessionFrameLanguage {
		return h, rest, nil
	}
	d := json.NewDecoder(bytes.NewReader(rest[:n]))
	d.DisallowUnknownFields()
	if err := d.Decode(&h.handles); err != nil {
		return sessionHead{}, nil, errors.New("its data-flow frame's handles are not a list of handles")
	}
	if _, err := d.Token(); err != io.EOF {
		return sessionHead{}, nil, errors.New("its data-flow frame's handles are not a list of handles")
	}
	if len(h.handles) == 0 {
		return sessionHead{}, nil, errors.New("its data-flow frame's handles are an empty list (a frame without handles is version 1, or has a length of 0)")
	}
	if err := checkParkedHandles(h.handles, "session"); err != nil {
		return sessionHead{}, nil, fmt.Errorf("its data-flow frame's handles are refused: %w", err)
	}
	for i := range h.handles { // as written: a value's size is its compact JSON's
		var v bytes.Buffer
		_ = json.Compact(&v, h.handles[i].Value) // valid JSON: checked
		h.handles[i].Value = v.Bytes()
	}
	return h, rest[n:], nil
}

// unframeLanguage reads the language of a version 3 frame from rest, the
// frame after its label: a canonical name other than TypeScript's (whose
// sessions are written without it).
func unframeLanguage(rest []byte) (api.Language, []byte, error) {
	if len(rest) < 1 || len(rest) < 1+int(rest[0]) {
		return "", nil, errors.New("its data-flow frame is truncated in its language")
	}
	name := string(rest[1 : 1+int(rest[0])])
	lang, err := api.ParseLanguage(name)
	if err != nil || lang == api.LanguageTypeScript || string(lang) != name {
		return "", nil, fmt.Errorf("its data-flow frame's language %q is not one a version 3 frame names", name)
	}
	return lang, rest[1+int(rest[0]):], nil
}

package serve

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/ptcx/ptcx/serve/store"
)

// A session's saved state in the store: the bytes of
// wasmhost.Session.Export with what they are the state of, as a parked
// execution's bytes carry their execution (parkfile.go).
//
//	"PTCXSESS" | version u32 | meta length u32 | meta (JSON) | state
//
// The meta names the tenant, scope and session, the object the bytes were
// written as, and the state's SHA-256; the object's name is
// "ss_KEY.R.SUM" (KEY the session's record key, R random, SUM the first 16
// hex digits of the state's SHA-256), so that the name alone proves which
// session's it is before anything is read or deleted, and the bytes prove
// it again once read. A node restores only bytes that say they are the
// claimed session's, under the name it claimed, with their checksum; and
// deletes only objects whose name is the session's own.

const (
	sessionFileMagic   = "PTCXSESS"
	sessionFileVersion = 1
	// sessionFileOverhead bounds what the envelope adds to a state: the
	// 16-byte header and a meta of at most sessionFileOverhead-16 bytes
	// (its names are bounded: a tenant 63 bytes, a scope and a session
	// 128, an object 82).
	sessionFileOverhead = 4 << 10
	// MaxSessionStateBytes is the largest tenants[].sessions.max_bytes: a
	// state in its envelope within what a store keeps of one snapshot
	// (store.MaxSnapshotBytes).
	MaxSessionStateBytes = store.MaxSnapshotBytes - sessionFileOverhead
	// sessionObjectPrefix starts every session object's name; the names of
	// objects written before sessions were bound to their state
	// ("ss_" and 24 hex digits) start with it too, and prove nothing.
	sessionObjectPrefix = "ss_"
)

// sessionMeta says whose state a session's bytes are.
type sessionMeta struct {
	Tenant string `json:"tenant"`
	Scope  string `json:"scope"`
	Name   string `json:"name"`
	// Object is the name the bytes were written under.
	Object string `json:"object"`
	// SHA256 is the hex SHA-256 of the state.
	SHA256 string `json:"sha256"`
}

// sessionObjectName names a new object of session key, holding state.
func sessionObjectName(key string, state []byte) string {
	var r [6]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	return sessionObjectPrefix + key + "." + hex.EncodeToString(r[:]) + "." + snapshotSum(state)
}

// sessionObjectSum returns the SUM of object if its name is one of session
// key's (sessionObjectName's form), and whether it is.
func sessionObjectSum(key, object string) (string, bool) {
	rest, ok := strings.CutPrefix(object, sessionObjectPrefix+key+".")
	if !ok {
		return "", false
	}
	r, sum, ok := strings.Cut(rest, ".")
	if !ok || len(r) != 12 || len(sum) != 16 || !isHex(r) || !isHex(sum) {
		return "", false
	}
	return sum, true
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil
}

// encodeSessionFile wraps state in its envelope.
func encodeSessionFile(m sessionMeta, state []byte) ([]byte, error) {
	mb, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if len(mb) > sessionFileOverhead-16 {
		return nil, fmt.Errorf("its meta is %d bytes, over %d", len(mb), sessionFileOverhead-16)
	}
	out := make([]byte, 0, 16+len(mb)+len(state))
	out = append(out, sessionFileMagic...)
	out = binary.BigEndian.AppendUint32(out, sessionFileVersion)
	out = binary.BigEndian.AppendUint32(out, uint32(len(mb)))
	out = append(out, mb...)
	return append(out, state...), nil
}

// errSessionFile wraps every refusal of decodeSessionFile.
var errSessionFile = errors.New("not a session's saved state of ptcx serve")

// decodeSessionFile reads a session's bytes: their meta, and their state
// (a slice of data) once its checksum matches the meta's. It allocates
// nothing beyond the meta.
func decodeSessionFile(data []byte) (sessionMeta, []byte, error) {
	bad := func(format string, args ...any) (sessionMeta, []byte, error) {
		return sessionMeta{}, nil, fmt.Errorf("%w: %s", errSessionFile, fmt.Sprintf(format, args...))
	}
	if len(data) < 16 || string(data[:8]) != sessionFileMagic {
		return bad("it does not start with %q and its 16-byte header (an object written before sessions were bound to their state, or not a session's)", sessionFileMagic)
	}
	if v := binary.BigEndian.Uint32(data[8:]); v != sessionFileVersion {
		return bad("it is of version %d; this node reads version %d only", v, sessionFileVersion)
	}
	n := uint64(binary.BigEndian.Uint32(data[12:]))
	if n > sessionFileOverhead-16 || n > uint64(len(data)-16) {
		return bad("its meta claims %d bytes and %d are left (at most %d)", n, len(data)-16, sessionFileOverhead-16)
	}
	var m sessionMeta
	d := json.NewDecoder(bytes.NewReader(data[16 : 16+n]))
	d.DisallowUnknownFields()
	if err := d.Decode(&m); err != nil {
		return bad("its meta: %v", err)
	}
	if d.More() {
		return bad("its meta has data after its JSON object")
	}
	state := data[16+n:]
	if sum := sha256.Sum256(state); hex.EncodeToString(sum[:]) != m.SHA256 {
		return bad("its state's checksum is not the one its meta records (corrupt)")
	}
	return m, state, nil
}

// belongsTo checks that m, read from object, is the state of session
// (scope, name) of tenant, written under that name.
func (m sessionMeta) belongsTo(tenant, scope, name, object string) error {
	if m.Tenant != tenant || m.Scope != scope || m.Name != name {
		return errors.New("its bytes are another session's state")
	}
	if m.Object != object {
		return errors.New("its bytes were written under another name (copied or renamed)")
	}
	return nil
}

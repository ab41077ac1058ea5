package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"

	oteltrace "go.opentelemetry.io/otel/trace"
)

// RequestIDHeader names a request: the client's, when it sends one that
// fits (validRequestID), else one the server mints. Every response carries
// it back, and the log lines the request's handling writes name it
// (request_id), beside the trace's ids when the request is traced.
const RequestIDHeader = "X-Request-ID"

// maxRequestIDLen bounds a client's request id: longer ones are replaced.
const maxRequestIDLen = 128

// validRequestID says whether a client's X-Request-ID is kept: 1 to
// maxRequestIDLen bytes of letters, digits and - _ . : / + =, the
// characters of UUIDs, ULIDs, trace ids and base64. Anything else (a
// header that would forge a log line, or grow every line of it) is replaced
// by a minted id, not refused: the id is the operator's aid, not the
// client's contract.
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '-' || c == '_' || c == '.' || c == ':' || c == '/' || c == '+' || c == '=':
		default:
			return false
		}
	}
	return true
}

// newRequestID mints a request id: 16 random bytes in hex.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type requestIDKey struct{}

// withRequestID returns ctx carrying the request id id.
func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// requestID is the request id ctx carries, or "".
func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// withRequest serves every request with its id set (header in, header out,
// context) and, with a tracer, inside a server span (tracing.go).
func (s *Server) withRequest(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		ctx := withRequestID(r.Context(), id)
		ctx, end := s.startSpan(ctx, r)
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		defer func() { end(sw) }()
		next.ServeHTTP(sw, r.WithContext(ctx))
	})
}

// requestLogHandler adds to each record logged with a request's context
// (slog's …Context methods) the request's id and, when it is traced, the
// trace and span ids.
type requestLogHandler struct{ slog.Handler }

func (h requestLogHandler) Handle(ctx context.Context, rec slog.Record) error {
	if id := requestID(ctx); id != "" {
		rec.AddAttrs(slog.String("request_id", id))
	}
	if sc := oteltrace.SpanContextFromContext(ctx); sc.IsValid() {
		rec.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, rec)
}

func (h requestLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestLogHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestLogHandler) WithGroup(name string) slog.Handler {
	return requestLogHandler{h.Handler.WithGroup(name)}
}

package bench

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/ptcx/ptcx/serve"
	"github.com/ptcx/ptcx/serve/client"
)

// ImplHTTPFloor is loopback HTTP with nothing behind it, measured as a
// peer on serve_rps: the same client (serve/client, keep-alive, the same
// connections) posting the same requests at the same concurrency to a
// net/http server in this process whose handler checks the key, decodes
// the request and answers a settled execution at once, running nothing.
// It is what HTTP alone costs on both ends while they share the cores, so
// with ptcx-in-process beside it the run bounds serve_rps from above: a
// request costs at least a run's CPU and HTTP's, so serve_rps ≤
// 1 ÷ (1/ptcx-in-process + 1/http-floor) when both fill the cores
// (docs/performance.md, "The service path"). It measures no other kind.
const ImplHTTPFloor = "http-floor"

// NewHTTPFloor returns the ImplHTTPFloor peer.
func NewHTTPFloor() Impl { return httpFloor{} }

type httpFloor struct{}

func (httpFloor) Name() string { return ImplHTTPFloor }

func (httpFloor) Measure(ctx context.Context, j Job) (Raw, error) {
	if j.Kind != ServeThroughput {
		return Raw{}, fmt.Errorf("%w: %s measures only serve_rps's HTTP, with no run behind it", ErrUnsupported, ImplHTTPFloor)
	}
	f, err := startHTTPFloor(MaxParallel)
	if err != nil {
		return Raw{}, err
	}
	raw, err := throughput(ctx, j, f.execute)
	if err := errors.Join(err, f.stop(ctx)); err != nil {
		return Raw{}, err
	}
	raw.Note = "no run: the handler answers a settled execution at once"
	return raw, nil
}

// floorServer is the ImplHTTPFloor server and its client.
type floorServer struct {
	hs   *http.Server
	done chan struct{}
	base string // http://127.0.0.1:port
	http *http.Client
	c    *client.Client
	n    atomic.Int64 // executions answered: their ids
}

// startHTTPFloor listens on loopback; conns is how many keep-alive
// connections its client keeps (startServe's client: keepAlive).
func startHTTPFloor(conns int) (*floorServer, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", ImplHTTPFloor, err)
	}
	f := &floorServer{done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/executions", f.answer)
	f.hs = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(f.done)
		_ = f.hs.Serve(l)
	}()
	f.http = keepAlive(conns)
	f.base = "http://" + l.Addr().String()
	f.c = client.New(f.base, serveKey, f.http)
	return f, nil
}

// answer is POST /v1/executions without the execution: the key checked, the
// request decoded (a program required), a settled execution written. Its
// value is null: it ran nothing.
func (f *floorServer) answer(w http.ResponseWriter, r *http.Request) {
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), []byte("Bearer "+serveKey)) != 1 {
		http.Error(w, `{"error":{"code":"unauthorized","message":"bad key"}}`, http.StatusUnauthorized)
		return
	}
	var req serve.ExecutionRequest
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Code == "" {
		http.Error(w, `{"error":{"code":"bad_request","message":"no program"}}`, http.StatusBadRequest)
		return
	}
	st := serve.ExecutionState{ID: "exe_" + strconv.FormatInt(f.n.Add(1), 10), Status: serve.StatusCompleted,
		Value: json.RawMessage("null"), Stats: &serve.Stats{}}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(&st)
}

// execute posts p as serve_rps does and checks the answer is a settled
// execution (its value is not p's: nothing ran).
func (f *floorServer) execute(ctx context.Context, p Program) error {
	st, err := f.c.Run(ctx, serve.ExecutionRequest{Code: p.TS}, client.RunOptions{MaxRetries: math.MaxInt32, MaxElapsed: time.Hour})
	if err != nil {
		return fmt.Errorf("bench: %s: %w", ImplHTTPFloor, err)
	}
	if st.Status != serve.StatusCompleted || st.ID == "" {
		return fmt.Errorf("bench: %s: the answer %+v is not a settled execution", ImplHTTPFloor, st)
	}
	return nil
}

// stop shuts the server and its client's connections down.
func (f *floorServer) stop(ctx context.Context) error {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	err := f.hs.Shutdown(sctx)
	<-f.done
	f.http.CloseIdleConnections()
	return err
}

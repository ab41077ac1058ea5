package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/ptcx/ptcx/api"
	"github.com/ptcx/ptcx/executor"
	"github.com/ptcx/ptcx/internal/jsonrpcline"
	"github.com/ptcx/ptcx/registry"
	"github.com/ptcx/ptcx/trace"
	"github.com/ptcx/ptcx/wasmhost"
)

var batchCommand = command{
	name:  "batch",
	brief: "run a JSON-lines file of programs, a result line each (pass^k too)",
	summary: "Run every item of a JSON-lines file ({\"id\", \"code\", optional \"language\", \"description\", \"scope\", \"seed\", \"limits\",\n" +
		"\"replay\": a trace record to answer the calls from, \"metadata\" and \"target\": copied to its output lines})\n" +
		"as run_code calls through one process and a pool of\n" +
		"--parallel workers, writing one JSON line per run ({id, rep, seed, ok, text, value, error, stats, calls}) in\n" +
		"input or completion order. --resume skips the runs already in --out; --repeat K runs each item K times with\n" +
		"seeds derived from its seed and reports pass^k agreement. A progress bar (or periodic lines) and a summary go\n" +
		"to stderr. A call that asks for approval (needs_approval, on_violation ask) is never asked about: --approve-all\n" +
		"or --deny-all decide it, and without either it is denied.\n" +
		"Exit status: 0 the batch ran (items may have failed: see their lines), 1 it could not, 2 usage.",
	usage: "batch [--tools FILE] [--mode MODE] [--scope NAME] [--workspace DIR] [--no-builtin] [--allow-bash] [--upstream [NAME=]CMD]... " +
		"[--parallel N] [--out FILE] [--order input|completion] [--resume] [--repeat K] [--seed N] [--trace FILE] [--bad skip|fail] [--no-timings] [--approve-all|--deny-all] ITEMS.jsonl|-",
	run: runBatch,
}

// DefaultMaxItemBytes bounds one line of a batch's input: room for a
// program of the largest size and a replayed trace of many calls.
const DefaultMaxItemBytes = 64 << 20

// maxRepeat bounds --repeat: pass^k harnesses use k of 1 to 32.
const maxRepeat = 1000

// batchItem is one line of the input.
type batchItem struct {
	ID          string          `json:"id"`
	Code        string          `json:"code"`
	Language    string          `json:"language"` // run_code's language: "" for TypeScript; the batch's --languages must enable it
	Description string          `json:"description"`
	Scope       string          `json:"scope"`
	Seed        *uint64         `json:"seed"`
	Limits      json.RawMessage `json:"limits"`
	Replay      *trace.Record   `json:"replay"`
	// Metadata and Target are the harness's (inspect-ai samples carry
	// them): not read, copied to each of the item's output lines as given.
	Metadata json.RawMessage `json:"metadata"`
	Target   json.RawMessage `json:"target"`
}

// batchJob is one run of an item.
type batchJob struct {
	seq  int64
	item *batchItem
	rep  int
	seed *uint64
}

// batchLine is one line of the output.
type batchLine struct {
	ID          string            `json:"id"`
	Rep         *int              `json:"rep,omitempty"`
	Seed        *uint64           `json:"seed,omitempty"`
	OK          bool              `json:"ok"`
	Text        string            `json:"text"`
	Value       json.RawMessage   `json:"value,omitempty"`
	Error       *trace.Error      `json:"error,omitempty"`
	Stats       batchStats        `json:"stats"`
	Calls       []batchCall       `json:"calls"`
	Divergence  *trace.Divergence `json:"divergence,omitempty"`
	Differences []string          `json:"differences,omitempty"`
	Metadata    json.RawMessage   `json:"metadata,omitempty"` // the item's, as given
	Target      json.RawMessage   `json:"target,omitempty"`   // the item's, as given
}

// batchStats are a run's measurements; the times are left out with
// --no-timings, so that two batches' outputs can be compared byte for byte.
type batchStats struct {
	Calls       int    `json:"calls"`
	MemoryBytes int64  `json:"memory_bytes"`
	ComputeUS   *int64 `json:"compute_us,omitempty"`
	WallUS      *int64 `json:"wall_us,omitempty"`
	DurationUS  *int64 `json:"duration_us,omitempty"`
}

// batchCall is one nested call of a run, in submission order.
type batchCall struct {
	Tool string   `json:"tool"`
	OK   bool     `json:"ok"`
	Code api.Code `json:"code,omitempty"`
}

// batchResult is a finished job: its line and what the summary needs.
type batchResult struct {
	seq         int64
	interrupted bool // the batch was stopped during the run: it is not written, so --resume runs it again
	id          string
	fp          [32]byte // what agreement compares (fingerprint)
	line        []byte
	outcome     string
	took        time.Duration
}

type batchOptions struct {
	parallel   int
	repeat     int
	order      string
	bad        string
	resume     bool
	noTimings  bool
	out        string
	progress   time.Duration
	maxLine    int
	baseSeed   *uint64
	scope      string
	traceWrite func(trace.Record)
}

func runBatch(ctx context.Context, c command, s *stdio, args []string) int {
	st := setup{defaultMode: api.ModePTC}
	fs := newFlags(c, s)
	st.flags(fs, true)
	var ef evalFlags
	ef.register(fs)
	var o batchOptions
	fs.IntVar(&o.parallel, "parallel", runtime.NumCPU(), "how many items run at once")
	fs.StringVar(&o.out, "out", "", "write the result lines to `FILE` (default: stdout)")
	fs.StringVar(&o.order, "order", "input", "the order of the result lines: input or completion")
	fs.BoolVar(&o.resume, "resume", false, "skip the runs --out already has, and append to it")
	fs.IntVar(&o.repeat, "repeat", 1, "run each item `K` times, with seeds derived from its seed (pass^k)")
	fs.StringVar(&o.bad, "bad", "skip", "a malformed line: skip it (reported with its number) or fail the batch")
	fs.BoolVar(&o.noTimings, "no-timings", false, "leave the times out of the result lines (for comparing outputs)")
	fs.DurationVar(&o.progress, "progress-every", 5*time.Second, "how often a progress line is written when stderr is not a terminal")
	fs.IntVar(&o.maxLine, "max-line-bytes", DefaultMaxItemBytes, "the longest input line, in `BYTES`")
	var af approvalFlags
	af.register(fs, false)
	pos, code, ok := parse(fs, args)
	if !ok {
		return code
	}
	approver, err := af.approver(s, "ptcx batch", false)
	if err != nil {
		return usageError(fs, s, "%v", err)
	}
	switch {
	case len(pos) != 1:
		return usageError(fs, s, "want one ITEMS file (or - for stdin), got %d arguments", len(pos))
	case o.parallel < 1:
		return usageError(fs, s, "--parallel %d: want at least 1", o.parallel)
	case o.repeat < 1 || o.repeat > maxRepeat:
		return usageError(fs, s, "--repeat %d: want 1 to %d", o.repeat, maxRepeat)
	case o.order != "input" && o.order != "completion":
		return usageError(fs, s, "--order %q: want input or completion", o.order)
	case o.bad != "skip" && o.bad != "fail":
		return usageError(fs, s, "--bad %q: want skip or fail", o.bad)
	case o.resume && o.out == "":
		return usageError(fs, s, "--resume needs --out: it skips the runs the output file already has")
	case o.progress <= 0:
		return usageError(fs, s, "--progress-every %v: want a positive duration", o.progress)
	case o.maxLine < 1:
		return usageError(fs, s, "--max-line-bytes %d: want a positive size", o.maxLine)
	}
	o.baseSeed = ef.seed

	in, total, err := openItems(s, pos[0])
	if err != nil {
		return fail(s, err)
	}
	defer in.Close()

	sum := newBatchSummary(o.repeat)
	out, done, err := openBatchOut(s, o, sum)
	if err != nil {
		return fail(s, err)
	}
	defer out.Close()

	closeTrace, err := ef.open(ctx, s, "batch", &st, o.resume)
	if err != nil {
		return fail(s, err)
	}
	var records sync.Map // call ID → trace.Record, until its worker takes it
	st.observe = func(reg *registry.Registry, cfg executor.Config) executor.Config {
		return trace.NewRecorder(reg, func(r trace.Record) {
			records.Store(r.ID, r)
			ef.export(r)
		}).Install(cfg)
	}
	if ef.writer != nil {
		o.traceWrite = func(r trace.Record) { _ = ef.writer.Write(r) }
	}
	e, err := st.build(ctx, executor.NewConfig().WithApprover(approver))
	if err != nil {
		_ = closeTrace()
		return setupFailed(fs, s, err)
	}
	defer e.close()
	o.scope = e.scope

	b := &batch{o: o, s: s, e: e, records: &records, done: done, sum: sum, out: out,
		progress: newBatchProgress(s.err, total*int64(o.repeat), o.progress)}
	status := b.run(ctx, in)
	if err := closeTrace(); err != nil {
		fmt.Fprintf(s.err, "ptcx batch: %s\n", err)
		status = exitTool
	}
	sum.print(s.err)
	return status
}

// openItems opens the input and counts its lines when it is a file (for
// the progress bar's total; 0 when unknown).
func openItems(s *stdio, path string) (io.ReadCloser, int64, error) {
	if path == "-" {
		return io.NopCloser(s.in), 0, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	var n int64
	br := bufio.NewReaderSize(f, 64<<10)
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 && chunk[len(chunk)-1] == '\n' {
			n++
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			if len(chunk) > 0 && chunk[len(chunk)-1] != '\n' {
				n++
			}
			break
		}
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, n, nil
}

// openBatchOut opens the output. With --resume it reads the lines already
// there (their runs are skipped and counted in the summary), drops a last
// line cut short by a kill, and appends.
func openBatchOut(s *stdio, o batchOptions, sum *batchSummary) (io.WriteCloser, map[string]bool, error) {
	done := map[string]bool{}
	if o.out == "" {
		return nopWriteCloser{s.out}, done, nil
	}
	if !o.resume {
		f, err := os.Create(o.out)
		return f, done, err
	}
	f, err := os.OpenFile(o.out, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, nil, err
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var good int64
	for {
		line, err := jsonrpcline.Read(br, o.maxLine+1<<20)
		if err != nil && !errors.Is(err, io.EOF) {
			f.Close()
			return nil, nil, fmt.Errorf("--resume: reading %s: %w", o.out, err)
		}
		if errors.Is(err, io.EOF) && len(line) == 0 {
			break
		}
		var l batchLine
		if errors.Is(err, io.EOF) || json.Unmarshal(line, &l) != nil || l.ID == "" {
			break // the last line, cut short: it is run again
		}
		good += int64(len(line)) + 1
		done[runKey(l.ID, l.Rep)] = true
		sum.add(l.ID, fingerprint(l), outcomeOfLine(l), -1)
	}
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("--resume: %w", err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, done, nil
}

func runKey(id string, rep *int) string {
	if rep == nil {
		return id
	}
	return id + "#" + strconv.Itoa(*rep)
}

func outcomeOfLine(l batchLine) string {
	switch {
	case l.Divergence != nil:
		return "diverged"
	case l.OK && len(l.Differences) > 0:
		return "differs"
	case l.OK:
		return "ok"
	case l.Error != nil && l.Error.Kind != "":
		return string(l.Error.Kind)
	case l.Error != nil:
		return string(l.Error.Code)
	}
	return "failed"
}

// batch is one running batch.
type batch struct {
	o        batchOptions
	s        *stdio
	e        *env
	records  *sync.Map
	done     map[string]bool
	sum      *batchSummary
	out      io.Writer
	progress *batchProgress
}

func (b *batch) run(ctx context.Context, in io.Reader) int {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan batchJob)
	results := make(chan batchResult)
	window := make(chan struct{}, 4*b.o.parallel) // jobs read and not yet written: bounds what input order holds
	var readErr error
	go func() {
		defer close(jobs)
		readErr = b.read(ctx, in, jobs, window) // runs already started finish
	}()
	var wg sync.WaitGroup
	for range b.o.parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				results <- b.runJob(ctx, j)
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	status := exitOK
	held := map[int64]batchResult{}
	var next int64
	var writeErr error
	interrupted := 0
	write := func(r batchResult) {
		if r.interrupted {
			interrupted++
			<-window
			return
		}
		if writeErr == nil {
			if _, err := b.out.Write(r.line); err != nil {
				writeErr = fmt.Errorf("writing the results: %w", err)
				cancel()
			}
		}
		b.sum.add(r.id, r.fp, r.outcome, r.took)
		b.progress.done(r.outcome != "ok")
		<-window
	}
	for r := range results {
		if b.o.order == "completion" {
			write(r)
			continue
		}
		held[r.seq] = r
		for {
			h, ok := held[next]
			if !ok {
				break
			}
			delete(held, next)
			next++
			write(h)
		}
	}
	b.progress.finish()
	if interrupted > 0 {
		readErr = errors.Join(readErr, fmt.Errorf("the batch was stopped: %d runs cut short were not written (--resume runs them again)", interrupted))
	}
	for _, err := range []error{readErr, writeErr} {
		if err != nil {
			fmt.Fprintf(b.s.err, "ptcx batch: %s\n", err)
			status = exitTool
		}
	}
	return status
}

// read parses the input and hands out one job per run not already done.
func (b *batch) read(ctx context.Context, in io.Reader, jobs chan<- batchJob, window chan struct{}) error {
	br := bufio.NewReaderSize(in, 64<<10)
	seen := map[string]int{} // id → line
	var seq int64
	for n := 1; ; n++ {
		line, err := jsonrpcline.Read(br, b.o.maxLine)
		if errors.Is(err, io.EOF) && len(line) == 0 {
			return nil
		}
		var problem string
		item := &batchItem{}
		switch {
		case errors.Is(err, jsonrpcline.ErrTooLong):
			problem = fmt.Sprintf("the line is over %d bytes (--max-line-bytes)", b.o.maxLine)
		case err != nil && !errors.Is(err, io.EOF):
			return fmt.Errorf("reading the items, line %d: %w", n, err)
		case len(bytes.TrimSpace(line)) == 0:
			continue
		default:
			problem = item.parse(line, seen, n)
		}
		if problem != "" {
			b.sum.bad()
			fmt.Fprintf(b.s.err, "ptcx batch: line %d: %s\n", n, problem)
			if b.o.bad == "fail" {
				return fmt.Errorf("line %d is malformed (--bad fail): the batch stops", n)
			}
			continue
		}
		for k := range b.o.repeat {
			var rep *int
			if b.o.repeat > 1 {
				rep = &k
			}
			if b.done[runKey(item.ID, rep)] {
				b.progress.skipped()
				continue
			}
			if ctx.Err() != nil {
				return nil
			}
			select {
			case window <- struct{}{}:
			case <-ctx.Done():
				return nil
			}
			jobs <- batchJob{seq: seq, item: item, rep: k, seed: b.seedOf(item, k)}
			seq++
		}
	}
}

// parse decodes and checks one item; it returns the problem, if any.
func (it *batchItem) parse(line []byte, seen map[string]int, n int) string {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(it); err != nil {
		return "not an item (a JSON object with id, code and optional language, description, scope, seed, limits, replay, metadata, target): " + err.Error()
	}
	switch {
	case it.ID == "":
		return `no "id"`
	case it.Code == "":
		return fmt.Sprintf(`item %q has no "code"`, it.ID)
	}
	if first, dup := seen[it.ID]; dup {
		return fmt.Sprintf("item %q again (first on line %d): ids must be unique", it.ID, first)
	}
	if it.Replay != nil {
		if err := it.Replay.Check(); err != nil {
			return fmt.Sprintf("item %q: replay: %s", it.ID, err)
		}
	}
	seen[it.ID] = n
	if it.Description == "" {
		it.Description = "batch item " + it.ID
	}
	return ""
}

// seedOf is the seed of an item's k-th run: its own seed (else --seed),
// mixed with k for k > 0; nil (the real world) when it has neither.
func (b *batch) seedOf(it *batchItem, k int) *uint64 {
	base := it.Seed
	if base == nil {
		base = b.o.baseSeed
	}
	if base == nil {
		return nil
	}
	s := *base
	if k > 0 {
		s = splitmix64(s + uint64(k))
	}
	return &s
}

// splitmix64 is a 64-bit mix (Steele, Lea and Flood), so that the seeds of
// an item's runs are unrelated to each other and to other items' seeds.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// runJob runs one job and shapes its line.
func (b *batch) runJob(ctx context.Context, j batchJob) batchResult {
	began := time.Now()
	l := batchLine{ID: j.item.ID, Seed: j.seed, Calls: []batchCall{}, Metadata: j.item.Metadata, Target: j.item.Target}
	callID := j.item.ID
	if b.o.repeat > 1 {
		l.Rep = &j.rep
		callID = runKey(j.item.ID, l.Rep)
	}
	var world *wasmhost.World
	if j.seed != nil {
		world = &wasmhost.World{Seed: *j.seed}
	}
	var rec trace.Record
	var res api.Result
	if j.item.Replay != nil {
		r := *j.item.Replay
		r.ID, r.Program.Code, r.Program.Description = callID, j.item.Code, j.item.Description
		if world != nil {
			r.Seed, r.ClockStart = &world.Seed, ""
		}
		rep, err := trace.Replay(ctx, r, trace.ReplayConfig{Runtime: b.e.rt})
		if err != nil {
			res = api.Result{ID: callID, Tool: registry.RunCode, Err: &api.Error{Code: api.CodeInternal, Message: err.Error()}, Text: err.Error()}
		} else {
			res, rec, l.Divergence, l.Differences = rep.Result, rep.Record, rep.Divergence, rep.Differences
			if b.o.traceWrite != nil {
				b.o.traceWrite(rec)
			}
		}
	} else {
		args := map[string]any{"code": j.item.Code, "description": j.item.Description}
		if j.item.Language != "" {
			args["language"] = j.item.Language // a language --languages does not enable fails the item, naming those it does
		}
		if len(j.item.Limits) > 0 {
			args["limits"] = j.item.Limits
		}
		raw, _ := json.Marshal(args) // strings and raw JSON already checked
		scope := j.item.Scope
		if scope == "" {
			scope = b.o.scope
		}
		res = b.e.exec.Execute(ctx, executor.Call{ID: callID, Scope: scope, Name: registry.RunCode, Args: raw, World: world})
		if v, ok := b.records.LoadAndDelete(callID); ok {
			rec = v.(trace.Record)
		}
	}
	took := time.Since(began)
	if ctx.Err() != nil {
		return batchResult{seq: j.seq, interrupted: true}
	}
	l.OK, l.Text = res.OK(), res.Text
	if res.OK() {
		l.Value = res.Value
	} else {
		l.Error = &trace.Error{Code: res.Err.Code, Kind: res.Err.Kind, Message: res.Err.Message}
	}
	for _, c := range rec.Calls {
		bc := batchCall{Tool: c.Tool, OK: c.OK}
		if c.Error != nil {
			bc.Code = c.Error.Code
		}
		l.Calls = append(l.Calls, bc)
	}
	if st := rec.Stats; st != nil {
		l.Stats = batchStats{Calls: st.Calls, MemoryBytes: st.MemoryBytes}
		if !b.o.noTimings {
			l.Stats.ComputeUS, l.Stats.WallUS, l.Stats.DurationUS = &st.ComputeUS, &st.WallUS, &st.DurationUS
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(l); err != nil {
		buf.Reset()
		fmt.Fprintf(&buf, `{"id":%q,"ok":false,"text":%q,"error":{"code":"INTERNAL","message":%q},"stats":{"calls":0,"memory_bytes":0},"calls":[]}`+"\n",
			l.ID, err.Error(), err.Error())
	}
	return batchResult{seq: j.seq, id: l.ID, fp: fingerprint(l), line: buf.Bytes(), outcome: outcomeOfLine(l), took: took}
}

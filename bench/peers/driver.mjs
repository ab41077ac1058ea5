// driver.mjs runs benchmark jobs (bench.Job, one JSON line each on standard
// input, one at a time) on a Node peer and prints one JSON line for each,
// bench.Raw: {samples, base, note} in the job kind's raw unit (ns, bytes,
// runs per second), or {error} when the peer cannot run it ({missing} when
// it is absent here, {unsupported} when it cannot measure the kind: a
// Worker neither snapshots nor pools). Every answer is checked. It ends at
// the end of its input. The jobs of one process are the rounds of one
// workload (bench.Run): the process, its compiled module and its JIT stay
// warm from one round to the next, as ptcx's and goja's do.
//
//   node driver.mjs worker              a fresh worker_threads Worker per run
//   node driver.mjs quickjs-wasi DIR    a fresh quickjs-wasi VM per run, the
//                                       package from DIR/node_modules
//
// The tools are the Go side's: echo ({i} → {i}), sleep20 (true after 20 ms),
// wait (true when the live-memory sample releases it).
import { Worker } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [peer, modulesDir] = process.argv.slice(2);

function print(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

// parking is the wait tool: arm(n) before a live-memory sample, every
// wait() resolves when release() is called; parked resolves when n came.
const parking = {
  want: 0, count: 0, parked: null, onParked: null, released: null, release: null,
  arm(n) {
    this.want = n; this.count = 0;
    this.parked = new Promise((r) => { this.onParked = r; });
    this.released = new Promise((r) => { this.release = r; });
  },
  wait() {
    if (!this.released) return Promise.reject(new Error('wait called outside the live-memory workload'));
    if (++this.count === this.want) this.onParked();
    return this.released.then(() => true);
  },
};

// hostTool answers one nested call on the host.
function hostTool(name, args) {
  switch (name) {
    case 'echo': return Promise.resolve(args);
    case 'sleep20': return new Promise((r) => setTimeout(() => r(true), 20));
    case 'wait': return parking.wait();
    default: return Promise.reject(new Error(`no tool ${name}`));
  }
}

function check(program, got) {
  if (got !== program.answer) {
    throw new Error(`wrong answer: got ${got}, want ${program.answer} (program ${JSON.stringify(program.ts)})`);
  }
}

// ---- worker: a fresh Worker per run; tools are postMessage round trips --

const workerSource = `
const { parentPort, workerData } = require('node:worker_threads');
let next = 0;
const pending = new Map();
parentPort.on('message', (m) => {
  const p = pending.get(m.id);
  pending.delete(m.id);
  if (m.error !== undefined) p.reject(new Error(m.error)); else p.resolve(m.value);
});
const tools = new Proxy({}, { get: (_, name) => (args) => new Promise((resolve, reject) => {
  const id = next++;
  pending.set(id, { resolve, reject });
  parentPort.postMessage({ id, name, args });
}) });
const body = new (async () => {}).constructor('tools', workerData.js);
body(tools).then(
  (v) => parentPort.postMessage({ done: true, result: JSON.stringify(v) }),
  (e) => parentPort.postMessage({ done: true, error: String((e && e.stack) || e) }));
`;

async function runWorker(program) {
  const w = new Worker(workerSource, { eval: true, workerData: { js: program.js } });
  try {
    const result = await new Promise((resolve, reject) => {
      w.on('error', reject);
      w.on('exit', (code) => reject(new Error(`the worker exited (${code}) before answering`)));
      w.on('message', (m) => {
        if (m.done) {
          if (m.error !== undefined) reject(new Error(m.error)); else resolve(m.result);
          return;
        }
        hostTool(m.name, m.args).then(
          (value) => w.postMessage({ id: m.id, value }),
          (e) => w.postMessage({ id: m.id, error: String(e) }));
      });
    });
    check(program, result);
  } finally {
    await w.terminate();
  }
}

// ---- quickjs-wasi: a fresh VM per run from one compiled module ----------

async function loadQuickJS(dir) {
  const pkg = join(dir, 'node_modules', 'quickjs-wasi');
  let mod;
  try {
    mod = await import(pathToFileURL(join(pkg, 'dist', 'index.js')).href);
  } catch (e) {
    throw Object.assign(new Error(`no quickjs-wasi in ${dir}/node_modules (run npm ci there; make bench does): ${e.message}`), { missing: true });
  }
  const wasm = await WebAssembly.compile(readFileSync(join(pkg, 'quickjs.wasm')));
  return { QuickJS: mod.QuickJS, wasm };
}

async function quickjsRunner({ QuickJS, wasm }) {
  return async function runQuickJS(program) {
    const vm = await QuickJS.create({ wasm });
    try {
      const tools = vm.newObject();
      for (const name of ['echo', 'sleep20', 'wait']) {
        const f = vm.newFunction(name, (...args) => {
          const input = args.length > 0 ? vm.dump(args[0]) : undefined;
          const d = vm.newPromise();
          hostTool(name, input).then(
            (v) => { d.resolve(vm.hostToHandle(v)); vm.executePendingJobs(); },
            (e) => { d.reject(vm.newString(String(e))); vm.executePendingJobs(); });
          return d.handle;
        });
        vm.setProp(tools, name, f);
        f.dispose();
      }
      vm.setProp(vm.global, 'tools', tools);
      tools.dispose();
      const p = vm.evalCode(`(async () => JSON.stringify(await (async () => {\n${program.js}\n})()))()`);
      vm.executePendingJobs();
      const r = await vm.resolvePromise(p);
      p.dispose();
      if ('error' in r) throw new Error(`the program threw: ${r.error.consume((h) => vm.dump(h))}`);
      check(program, r.value.consume((h) => h.toString()));
    } finally {
      vm.dispose();
    }
  };
}

// ---- quickjs-wasi's snapshots: suspend and resume ----------------------
//
// The program runs in a fresh VM until it waits on its one call; its tools
// are promises kept in the VM (__calls), so that a VM restored from a
// snapshot can still be answered. suspend times vm.snapshot() and
// serializeSnapshot (the VM to bytes); resume times deserializeSnapshot and
// QuickJS.restore (bytes to a VM ready to take the call's result); the call
// is then answered, untimed, and the answer checked.

const heldPrelude = `globalThis.__calls = [];
globalThis.tools = new Proxy({}, { get: (_, name) => (args) =>
  new Promise((resolve, reject) => { __calls.push({ name, args, resolve, reject }); }) });`;

function evalJSON(vm, code) {
  const h = vm.evalCode(`JSON.stringify(${code})`);
  try { return JSON.parse(vm.dump(h)); } finally { h.dispose(); }
}

async function heldVM({ QuickJS, wasm }, program) {
  const vm = await QuickJS.create({ wasm });
  vm.evalCode(heldPrelude + `
(async () => JSON.stringify(await (async () => {\n${program.js}\n})()))().then(
  (v) => { globalThis.__result = v; }, (e) => { globalThis.__error = String((e && e.stack) || e); });`).dispose();
  vm.executePendingJobs();
  const [names, error] = evalJSON(vm, '[__calls.map((c) => c.name), globalThis.__error ?? null]');
  if (error !== null || names.length !== 1 || names[0] !== 'echo') {
    vm.dispose();
    throw new Error(`the program to suspend waits on ${JSON.stringify(names)} (error ${error}), want its one echo call`);
  }
  return vm;
}

async function resumeChecked({ QuickJS, wasm }, program, bytes) {
  const start = now();
  const vm = await QuickJS.restore(QuickJS.deserializeSnapshot(bytes), { wasm });
  const took = Number(now() - start);
  try {
    vm.evalCode('__calls[0].resolve(__calls[0].args)').dispose();
    vm.executePendingJobs();
    const [result, error] = evalJSON(vm, '[globalThis.__result ?? null, globalThis.__error ?? null]');
    if (error !== null) throw new Error(`the resumed program threw: ${error}`);
    check(program, result);
  } finally {
    vm.dispose();
  }
  return took;
}

async function snapshots(job, qjs) {
  const program = job.programs[0];
  const suspendOnce = async () => {
    const vm = await heldVM(qjs, program);
    try {
      const start = now();
      const bytes = qjs.QuickJS.serializeSnapshot(vm.snapshot());
      return { bytes, took: Number(now() - start) };
    } finally {
      vm.dispose();
    }
  };
  const first = await suspendOnce();
  await resumeChecked(qjs, program, first.bytes);
  const samples = [];
  for (let i = 0; i < job.samples; i++) {
    if (job.kind === 'suspend') {
      const s = await suspendOnce();
      await resumeChecked(qjs, program, s.bytes);
      samples.push(s.took);
    } else {
      samples.push(await resumeChecked(qjs, program, first.bytes));
    }
  }
  const kib = (n) => `${Math.round(n / 1024)} KiB`;
  return { samples, note: `snapshot of ${kib(first.bytes.length)} (serializeSnapshot: the VM's whole memory), ` +
    `${kib(gzipSync(first.bytes).length)} gzipped (node:zlib)` };
}

// ---- quickjs-wasi's "pool": it has none; job.live VMs made ahead --------

async function pooledMemory(job, qjs, run) {
  const samples = [];
  for (let s = 0; s < job.samples; s++) {
    const before = await rss();
    const vms = [];
    try {
      for (let i = 0; i < job.live; i++) vms.push(await qjs.QuickJS.create({ wasm: qjs.wasm }));
      samples.push((await rss() - before) / job.live);
    } finally {
      for (const vm of vms) vm.dispose();
    }
    await run(job.programs[0]);
  }
  return { samples, note: `quickjs-wasi has no pool of its own: ${job.live} VMs made ahead and kept idle` };
}

// ---- the kinds, measured as bench/measure.go measures them --------------

const now = () => process.hrtime.bigint();

async function latency(job, programs, run) {
  await run(programs[0]);
  const pick = (i) => (programs.length === 1 ? programs[0] : programs[i + 1]);
  const samples = [];
  for (let i = 0; i < job.samples; i++) {
    const p = pick(i);
    const start = now();
    await run(p);
    samples.push(Number(now() - start));
  }
  return samples;
}

async function throughput(job, run) {
  await run(job.programs[0]);
  const samples = [];
  for (let s = 0; s < job.samples; s++) {
    let next = 0;
    const start = now();
    await Promise.all(Array.from({ length: job.parallel }, async () => {
      while (next++ < job.batch) await run(job.programs[0]);
    }));
    samples.push(job.batch / (Number(now() - start) / 1e9));
  }
  return samples;
}

// rss is the process's proportional resident memory (Pss, from
// /proc/self/smaps_rollup) in bytes, once collected: the figure
// bench/measure.go takes for ptcx, so that every implementation is
// measured the same way. V8 gives a collected WebAssembly memory's pages
// back on tasks of its own, after gc() returns: read at once, the pages of
// the VMs a sample disposed were still there when the next sample read its
// baseline, and went back while it made its VMs, which made an idle VM read
// as 0.04 MiB; collected and read after ten collections 100 ms apart it
// reads about 0.5 MiB, sample after sample (a reading that stops once two
// in a row agree stops too early: the pages go back in bursts).
async function rss() {
  for (let i = 0; i < 10; i++) {
    if (global.gc) global.gc();
    await new Promise((r) => setTimeout(r, 100));
  }
  return pss();
}

function pss() {
  const text = readFileSync('/proc/self/smaps_rollup', 'utf8');
  const m = /^Pss:\s+(\d+) kB$/m.exec(text);
  if (!m) throw new Error('/proc/self/smaps_rollup has no line "Pss: N kB"');
  return Number(m[1]) * 1024;
}

async function liveMemory(job, run) {
  const samples = [];
  for (let s = 0; s < job.samples; s++) {
    const before = await rss();
    parking.arm(job.live);
    let failed = null;
    const runs = Array.from({ length: job.live }, () => run(job.programs[0]).catch((e) => { failed = failed || e; }));
    await Promise.race([parking.parked, Promise.all(runs)]);
    if (failed) { parking.release(); await Promise.all(runs); throw failed; }
    const after = await rss();
    parking.release();
    await Promise.all(runs);
    if (failed) throw failed;
    samples.push((after - before) / job.live);
  }
  return samples;
}

// cannot says why the worker peer cannot measure a kind.
const cannot = {
  suspend: 'a Worker cannot be captured to bytes: V8 snapshots only a fresh isolate, never one running a program',
  resume: 'a Worker cannot be captured to bytes: V8 snapshots only a fresh isolate, never one running a program',
  pool_memory: 'node-worker has no pool of ready instances: each run starts a fresh Worker',
};

// quickjs is the quickjs-wasi package and its runner, loaded at the first
// job that needs it and kept for the process's later jobs.
let quickjs = null;

async function runJob(job) {
  let run, qjs;
  if (peer === 'worker') {
    run = runWorker;
    if (cannot[job.kind]) throw Object.assign(new Error(cannot[job.kind]), { unsupported: true });
  } else if (peer === 'quickjs-wasi') {
    if (!quickjs) {
      const loaded = await loadQuickJS(modulesDir);
      quickjs = { qjs: loaded, run: await quickjsRunner(loaded) };
    }
    ({ qjs, run } = quickjs);
  } else throw new Error(`unknown peer ${peer}: want worker or quickjs-wasi`);
  switch (job.kind) {
    case 'suspend': case 'resume': return snapshots(job, qjs);
    case 'pool_memory': return pooledMemory(job, qjs, run);
    case 'latency': return { samples: await latency(job, job.programs, run) };
    case 'per_call': return { samples: await latency(job, job.programs, run), base: await latency(job, job.base, run) };
    case 'throughput': {
      const raw = { samples: await throughput(job, run) };
      if (peer === 'quickjs-wasi') raw.note = `the ${job.parallel} runs at a time share Node's one main thread`;
      return raw;
    }
    case 'live_memory': return { samples: await liveMemory(job, run) };
    default: throw new Error(`unknown kind ${job.kind}`);
  }
}

// failure is the line of a job that failed.
function failure(e) {
  if (e.missing) return { missing: e.message };
  if (e.unsupported) return { unsupported: e.message };
  return { error: String((e && e.stack) || e) };
}

async function main() {
  for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
    if (line.trim() === '') continue;
    let out;
    try {
      out = await runJob(JSON.parse(line));
    } catch (e) {
      out = failure(e);
    }
    print(out);
  }
}

main().then(
  () => process.exit(0),
  (e) => { print(failure(e)); process.exit(0); });

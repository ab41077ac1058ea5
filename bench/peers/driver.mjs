// driver.mjs runs one benchmark job (bench.Job, as JSON on standard input)
// on a Node peer and prints one JSON line, bench.Raw: {samples, base} in the
// job kind's raw unit (ns, bytes, runs per second), or {error} when the peer
// cannot run ({missing} when it is absent here). Every answer is checked.
//
//   node driver.mjs worker              a fresh worker_threads Worker per run
//   node driver.mjs quickjs-wasi DIR    a fresh quickjs-wasi VM per run, the
//                                       package from DIR/node_modules
//
// The tools are the Go side's: echo ({i} → {i}), sleep20 (true after 20 ms),
// wait (true when the live-memory sample releases it).
import { Worker } from 'node:worker_threads';
import { readFileSync } from 'node:fs';
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

async function quickjsRunner(dir) {
  const pkg = join(dir, 'node_modules', 'quickjs-wasi');
  let mod;
  try {
    mod = await import(pathToFileURL(join(pkg, 'dist', 'index.js')).href);
  } catch (e) {
    throw Object.assign(new Error(`no quickjs-wasi in ${dir}/node_modules (run npm ci there; make bench does): ${e.message}`), { missing: true });
  }
  const wasm = await WebAssembly.compile(readFileSync(join(pkg, 'quickjs.wasm')));
  return async function runQuickJS(program) {
    const vm = await mod.QuickJS.create({ wasm });
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

function rss() {
  if (global.gc) global.gc();
  return process.memoryUsage().rss;
}

async function liveMemory(job, run) {
  const samples = [];
  for (let s = 0; s < job.samples; s++) {
    const before = rss();
    parking.arm(job.live);
    let failed = null;
    const runs = Array.from({ length: job.live }, () => run(job.programs[0]).catch((e) => { failed = failed || e; }));
    await Promise.race([parking.parked, Promise.all(runs)]);
    if (failed) { parking.release(); await Promise.all(runs); throw failed; }
    const after = rss();
    parking.release();
    await Promise.all(runs);
    if (failed) throw failed;
    samples.push((after - before) / job.live);
  }
  return samples;
}

async function main() {
  const job = JSON.parse(readFileSync(0, 'utf8'));
  let run;
  if (peer === 'worker') run = runWorker;
  else if (peer === 'quickjs-wasi') run = await quickjsRunner(modulesDir);
  else throw new Error(`unknown peer ${peer}: want worker or quickjs-wasi`);
  switch (job.kind) {
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

main().then(
  (raw) => { print(raw); process.exit(0); },
  (e) => { print(e.missing ? { missing: e.message } : { error: String((e && e.stack) || e) }); process.exit(0); });

'use strict';
/*
 * server.js: a Node.js HTTP service whose requests run in OpenTelemetry
 * thread contexts (@datadog/pprof's ThreadContext, the Node.js thread
 * context a profiler reads through otel_thread_ctx_nodejs_v1), driven by a
 * client in the same process that keeps --concurrency requests in flight.
 * Each request runs in a context of its own (its route, its slot, a fresh
 * span id) and burns CPU in bursts separated by awaits (a timer, an
 * immediate, file I/O), so the contexts of concurrent requests interleave
 * on the one thread. Each burst runs in burn_K, K the request's slot: a
 * sample in burn_K belongs to the request that held slot K then. Slots go
 * round-robin over SLOTS, so a slot comes back only SLOTS requests later.
 * With --worker, a worker thread (an isolate of its own) runs tasks the same
 * way in wburn_K. The report (--output, JSON, written when stdin closes) has
 * every request's route, slot, span id and thread CPU time in its bursts,
 * and each burst's wall-clock interval and thread CPU time.
 * The process context (the key map) is published by nodectx.so, preloaded.
 */
const fs = require('node:fs');
const http = require('node:http');
const crypto = require('node:crypto');
const { Worker, isMainThread, parentPort, workerData } = require('node:worker_threads');
const { otelThreadCtx } = require('@datadog/pprof');

const KEYS = ['http.route', 'slot']; /* nodectx.so publishes the same map */
const SLOTS = 16;
const BURST_US = 2000;
const ROUTES = { '/alpha': 1, '/beta': 2, '/gamma': 3 }; /* bursts per request: the CPU shares */

function opts(argv) {
  const o = { concurrency: 6, worker: false, output: null };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--concurrency') o.concurrency = Number(argv[++i]);
    else if (argv[i] === '--worker') o.worker = true;
    else if (argv[i] === '--output') o.output = argv[++i];
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  return o;
}

/* Whether this process can publish contexts (not without AsyncContextFrame). */
function contextsOn() {
  try {
    otelThreadCtx.getProcessContextAttributes(KEYS);
    return null;
  } catch (e) {
    return e.message;
  }
}

/* One burn function per slot, each its own JS function with its own name. */
function burners(prefix) {
  const out = [];
  for (let k = 0; k < SLOTS; k++) {
    out.push(new Function('cpu', `return function ${prefix}_${k}(us) {
      const end = cpu() + us;
      let x = 0;
      while (cpu() < end)
        for (let i = 0; i < 4000; i++) x += Math.sqrt(i + x);
      return x;
    }`)(threadCpuUs));
  }
  return out;
}

function threadCpuUs() {
  const u = process.threadCpuUsage();
  return u.user + u.system;
}

function unixNs() {
  return Math.round((performance.timeOrigin + performance.now()) * 1e6);
}

const pauses = [
  () => new Promise((r) => setTimeout(r, 1)),
  () => new Promise((r) => setImmediate(r)),
  () => fs.promises.stat(__filename),
];

/* A request's work: bursts in its slot's burn function, an await between them. */
async function work(burn, bursts, truth) {
  for (let b = 0; b < bursts; b++) {
    const w0 = unixNs(), t0 = threadCpuUs();
    burn(BURST_US);
    const cpu = threadCpuUs() - t0;
    truth.cpu_us += cpu;
    truth.bursts.push([w0, unixNs(), cpu]);
    await pauses[(b + truth.slot) % pauses.length]();
  }
}

/* Runs fn in a new context of route and slot; the context's truth is recorded. */
function inContext(on, route, slot, fn, done) {
  const span = crypto.randomBytes(8);
  const truth = { route, slot, span_id: span.toString('hex'), cpu_us: 0, bursts: [] };
  done.push(truth);
  if (!on) return fn(truth);
  const ctx = new otelThreadCtx.ThreadContext(crypto.randomBytes(16), span, 1, [route, String(slot)]);
  return ctx.run(() => fn(truth));
}

function workerMain() {
  const on = workerData.on;
  const burn = burners('wburn');
  const done = [];
  let stop = false, n = 0;
  parentPort.on('message', () => { stop = true; });
  const loop = async () => {
    while (!stop) {
      const slot = n++ % SLOTS;
      await inContext(on, '/worker', slot, (t) => work(burn[slot], 2, t), done);
    }
  };
  Promise.all([loop(), loop(), loop()]).then(() => parentPort.postMessage(done));
}

function main() {
  const o = opts(process.argv.slice(2));
  const why = contextsOn();
  const on = why === null;
  const burn = burners('burn');
  const done = [];
  let slots = 0, stopping = false, inflight = 0;

  const server = http.createServer((req, res) => {
    const bursts = ROUTES[req.url];
    if (!bursts) {
      res.writeHead(404).end();
      return;
    }
    const slot = slots++ % SLOTS;
    inContext(on, req.url, slot, (t) => work(burn[slot], bursts, t), done)
      .then(() => res.end(`${slot}\n`));
  });
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.concurrency });
  const routes = Object.keys(ROUTES);
  let next = 0;
  const client = (port) => {
    if (stopping) {
      if (--inflight === 0) finish();
      return;
    }
    http.get({ port, path: routes[next++ % routes.length], agent }, (res) => {
      res.resume();
      res.on('end', () => client(port));
    });
  };
  let worker = null, workerDone = null;
  const finish = () => {
    const write = (wdone) => {
      if (o.output)
        fs.writeFileSync(o.output, JSON.stringify({
          pid: process.pid, contexts: on, why, keys: KEYS, requests: done, worker: wdone,
        }));
      server.close();
      agent.destroy();
      process.exit(0);
    };
    if (!worker) return write(null);
    worker.on('message', write);
    worker.postMessage('stop');
  };

  server.listen(0, '127.0.0.1', () => {
    const port = server.address().port;
    if (o.worker) worker = new Worker(__filename, { workerData: { on } });
    for (let i = 0; i < o.concurrency; i++, inflight++) client(port);
    process.stderr.write(`server: ready pid=${process.pid} contexts ${on ? 'on' : `off: ${why}`}\n`);
  });
  process.stdin.on('end', () => { stopping = true; });
  process.stdin.resume();
}

if (isMainThread) main();
else workerMain();

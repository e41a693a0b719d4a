'use strict';
/*
 * A recursion of DEPTH JavaScript frames from the script's top level, burning
 * CPU at its bottom, for the whole-stack tests of deep stacks
 * (tests/e2e/test_deep.py):
 *
 *   (script) -> level_0 -> level_1 -> ... -> level_9 -> level_0 -> ... -> burn
 *
 * Level i runs in level_{i % 10}, so a frame missing or out of order shows in
 * the names. Every call into a level that is a multiple of BRIDGE goes through
 * Array.prototype.map, a builtin (V8's own machine code) calling back into
 * JavaScript: its frame stands between the two levels. The main thread never
 * returns to the event loop while it burns: a worker thread reads stdin and,
 * at its end, tells the burn to stop through shared memory. Says
 * "deeprec.js: ready" on stderr once the burn runs.
 *
 *   node deeprec.js DEPTH [BRIDGE]   (BRIDGE: 100 by default)
 */
const { Worker } = require('worker_threads');

const depth = Number(process.argv[2]);
const BRIDGE = Number(process.argv[3] || 100);
const stopped = new Int32Array(new SharedArrayBuffer(4));

const watcher = new Worker(`
  const fs = require('fs');
  const { workerData } = require('worker_threads');
  const buf = Buffer.alloc(4096);
  for (;;) {
    let n;
    try {
      n = fs.readSync(0, buf);
    } catch (e) {
      if (e.code !== 'EAGAIN') break;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
      continue;
    }
    if (n === 0) break;
  }
  Atomics.store(workerData, 0, 1);
`, { eval: true, workerData: stopped });
watcher.unref();

function burn(x) {
  process.stderr.write('deeprec.js: ready\n');
  while (Atomics.load(stopped, 0) === 0) {
    for (let i = 0; i < 100000; i++) x = (x * 1103515245 + 12345) % 2147483648;
  }
  return x;
}

/*
 * level_0 .. level_9: level i calls level i + 1 (level_9 calls level_0),
 * through map at a bridge, or the burn at the last level.
 */
function level_0(i) {
  if (i + 1 === depth) return burn(i) + i;
  if ((i + 1) % BRIDGE === 0) return [i + 1].map(level_1)[0] + i;
  return level_1(i + 1) + i;
}

function level_1(i) {
  if (i + 1 === depth) return burn(i) + i;
  if ((i + 1) % BRIDGE === 0) return [i + 1].map(level_2)[0] + i;
  return level_2(i + 1) + i;
}

function level_2(i) {
  if (i + 1 === depth) return burn(i) + i;
  if ((i + 1) % BRIDGE === 0) return [i + 1].map(level_3)[0] + i;
  return level_3(i + 1) + i;
}

function level_3(i) {
  if (i + 1 === depth) return burn(i) + i;
  if ((i + 1) % BRIDGE === 0) return [i + 1].map(level_4)[0] + i;
  return level_4(i + 1) + i;
}

function level_4(i) {
  if (i + 1 === depth) return burn(i) + i;
  if ((i + 1) % BRIDGE === 0) return [i + 1].map(level_5)[0] + i;
  return level_5(i + 1) + i;
}

function level_5(i) {
  if (i + 1 === depth) return burn(i) + i;
  if ((i + 1) % BRIDGE === 0) return [i + 1].map(level_6)[0] + i;
  return level_6(i + 1) + i;
}

function level_6(i) {
  if (i + 1 === depth) return burn(i) + i;
  if ((i + 1) % BRIDGE === 0) return [i + 1].map(level_7)[0] + i;
  return level_7(i + 1) + i;
}

function level_7(i) {
  if (i + 1 === depth) return burn(i) + i;
  if ((i + 1) % BRIDGE === 0) return [i + 1].map(level_8)[0] + i;
  return level_8(i + 1) + i;
}

function level_8(i) {
  if (i + 1 === depth) return burn(i) + i;
  if ((i + 1) % BRIDGE === 0) return [i + 1].map(level_9)[0] + i;
  return level_9(i + 1) + i;
}

function level_9(i) {
  if (i + 1 === depth) return burn(i) + i;
  if ((i + 1) % BRIDGE === 0) return [i + 1].map(level_0)[0] + i;
  return level_0(i + 1) + i;
}

console.log(level_0(0));

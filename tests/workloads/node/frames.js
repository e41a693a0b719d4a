'use strict';
/*
 * JavaScript frames of known names and lines: loop calls spin_a, spin_b and
 * a class method, spin_c, each burning CPU in a loop of its own; between
 * rounds the event loop runs, so closing stdin ends the process. Says
 * "ready" on stderr once each has run.
 */

function spin_a(n) {
  let x = 0;
  for (let i = 0; i < n; i++) x += Math.sqrt(i + x);
  return x;
}

function spin_b(n) {
  let x = 1;
  for (let i = 0; i < n; i++) x = (x * 1103515245 + 12345) % 2147483648;
  return x;
}

class Spinner {
  spin_c(n) {
    let x = 0;
    for (let i = 0; i < n; i++) x += Math.cbrt(i);
    return x;
  }
}

const spinner = new Spinner();
let ready = false;

function loop() {
  spin_a(2e6);
  spin_b(2e6);
  spinner.spin_c(2e6);
  if (!ready) {
    process.stderr.write('ready\n');
    ready = true;
  }
  setImmediate(loop);
}

process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
loop();

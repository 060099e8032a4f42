#!/usr/bin/env node
// Test helper used as GIT_SSH_COMMAND prefix: `node throttled-ssh.mjs <bytes per second> ssh <args…>`.
// Runs ssh with its stdin fed at a bounded rate, so a test can interrupt a push mid-transfer.
import { spawn } from 'node:child_process';

const [rateArg, cmd, ...args] = process.argv.slice(2);
const rate = Number(rateArg);
const child = spawn(cmd, args, { stdio: ['pipe', 'inherit', 'inherit'] });
const sliceBytes = Math.max(1, Math.floor(rate / 20));
const queue = [];
let ended = false;
process.stdin.on('data', (c) => {
  queue.push(c);
  if (queue.length > 4) process.stdin.pause();
});
process.stdin.on('end', () => {
  ended = true;
});
const timer = setInterval(() => {
  let budget = sliceBytes;
  while (budget > 0 && queue.length > 0) {
    const head = queue[0];
    const part = head.subarray(0, budget);
    child.stdin.write(part);
    budget -= part.length;
    if (part.length === head.length) queue.shift();
    else queue[0] = head.subarray(part.length);
  }
  if (queue.length <= 4) process.stdin.resume();
  if (ended && queue.length === 0) {
    clearInterval(timer);
    child.stdin.end();
  }
}, 50);
child.stdin.on('error', () => undefined);
child.on('exit', (code, signal) => {
  clearInterval(timer);
  process.exit(code ?? (signal ? 128 : 1));
});

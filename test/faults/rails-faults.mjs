// Fault injection for the mock cell (Rails), loaded into every service of a fault-matrix stack by
// `NODE_OPTIONS=--import=<this file>`; it acts only in the mock-cell process and only while the
// control file (FAULTS_CONTROL) names a rule. A rule `{ "path": "<regex>", "mode": "down" | "slow" |
// "500", "delayMs"?: n }` applies to every request whose path matches: `down` resets the connection,
// `slow` answers only after `delayMs` (longer than the callers' timeouts), `500` answers an
// Internal Server Error. The file is read on every request, so a test switches faults on and off
// without restarting anything. Test code only: no service imports it.
import { readFileSync } from 'node:fs';
import http from 'node:http';

const controlFile = process.env.FAULTS_CONTROL;
const isMockCell = /mock-cell[/\\]main\.js$/.test(process.argv[1] ?? '');

function activeRule(url) {
  try {
    const { rules } = JSON.parse(readFileSync(controlFile, 'utf8'));
    const path = (url ?? '').split('?')[0];
    return (rules ?? []).find((r) => new RegExp(r.path).test(path));
  } catch {
    return undefined;
  }
}

if (controlFile && isMockCell) {
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function faultyEmit(event, ...args) {
    if (event !== 'request') return emit.call(this, event, ...args);
    const [req, res] = args;
    const rule = activeRule(req.url);
    if (!rule) return emit.call(this, event, ...args);
    if (rule.mode === 'down') {
      req.socket.destroy();
    } else if (rule.mode === '500') {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end('{"message":"500 Internal Server Error"}');
    } else {
      const timer = setTimeout(() => emit.call(this, event, ...args), rule.delayMs ?? 10_000);
      req.socket.once('close', () => clearTimeout(timer));
    }
    return true;
  };
}

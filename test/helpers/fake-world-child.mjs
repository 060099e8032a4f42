// A stand-in service for the world channel's unit tests (stack/control-server.test.ts): forked with
// an IPC channel, it answers control requests as lib/world-channel.ts does. Ops: `echo` (answers
// what it got and its NAME; `fault` too), `refuse` (ok:false), `silent` (never answers), `emit` (journals
// args.count entries, then answers), `reset` (answers), `exit` (exits 3). Any other op is unknown.
const name = process.env.FAKE_NAME ?? 'fake';
const cell = process.env.FAKE_CELL || null;
const entry = (i) => ({
  time: new Date().toISOString(),
  cell,
  service: process.env.FAKE_SERVICE ?? 'rails',
  endpoint: `/api/v4/internal/fake/${i}`,
  method: 'POST',
  status: 200,
  durationMs: 1,
  bytesIn: 0,
  bytesOut: 0,
});
process.on('message', (req) => {
  if (req?.type !== 'control') return;
  const reply = (a) => process.send({ type: 'control-answer', id: req.id, ...a });
  const unknown = () => reply({ ok: false, error: `unknown control op ${req.target} ${req.op}` });
  if (req.op === 'reset' && process.env.FAKE_NO_RESET === '1') return unknown();
  switch (req.op) {
    case 'echo':
    case 'fault':
    case 'clockSkew':
    case 'reset':
      return reply({
        ok: true,
        result: { name, target: req.target, cell: req.cell ?? null, op: req.op, args: req.args },
      });
    case 'refuse':
      return reply({ ok: false, error: 'count must be a positive integer' });
    case 'silent':
      return;
    case 'emit':
      for (let i = 0; i < (req.args.count ?? 1); i++) process.send({ type: 'journal', entry: entry(i) });
      return reply({ ok: true, result: null });
    case 'exit':
      process.exit(3);
      return;
    default:
      return unknown();
  }
});
process.send({ type: 'ready' });

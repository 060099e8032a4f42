import http from 'node:http';

/**
 * `git fetch "ext::node relay-main.js %S <primary_repo>"`: git's `ext::` transport runs this with
 * the service name and speaks the git protocol on its stdin/stdout; the relay POSTs stdin to
 * `<primary_repo>/ssh-upload-pack` (the SSH-over-HTTP tunnel, Authorization from GEO_AUTHORIZATION)
 * and copies the response to stdout, as gitlab-shell's Geo pull does. Only upload-pack is relayed.
 */
const [service, base] = process.argv.slice(2);
if (service !== 'git-upload-pack' || !base) {
  process.stderr.write(`geo relay: usage: relay-main.js git-upload-pack <primary_repo>\n`);
  process.exit(2);
}
const req = http.request(`${base}/ssh-upload-pack`, {
  method: 'POST',
  headers: { authorization: process.env.GEO_AUTHORIZATION ?? '', 'git-protocol': '' },
});
req.on('error', (err) => {
  process.stderr.write(`geo relay: ${err.message}\n`);
  process.exit(1);
});
req.on('response', (res) => {
  if (res.statusCode !== 200) {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => {
      process.stderr.write(
        `geo relay: ${res.statusCode}: ${Buffer.concat(chunks).toString('utf8').trim()}\n`,
      );
      process.exit(1);
    });
    return;
  }
  res.pipe(process.stdout);
  // Exit once git has every byte (stdin may stay open: the pack is complete when the answer is).
  res.on('end', () => process.stdout.write('', () => process.exit(0)));
  res.on('error', () => process.exit(1));
});
// upload-pack speaks first: the request must be on its way before git writes anything.
req.flushHeaders();
process.stdin.pipe(req);

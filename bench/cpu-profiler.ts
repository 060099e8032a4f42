import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';

/**
 * Preloaded into the stack's services by `npm run bench -- --profile` (`NODE_OPTIONS=--import …`,
 * since Node 20 refuses `--cpu-prof` there). Only service mains take part. On SIGUSR2 (sent by the
 * benchmark once the stack is up and warm, so start-up is left out) the V8 sampling profiler
 * starts; at exit the profile is written to `<BENCH_PROFILE_DIR>/<pid>.cpuprofile`.
 */
const dir = process.env.BENCH_PROFILE_DIR;
const main = process.argv[1] ?? '';
if (dir && /[\\/]dist[\\/](router|bridge|mock-cell|mock-gitaly)[\\/]main\.js$/.test(main)) {
  let session: Session | undefined;
  process.on('SIGUSR2', () => {
    if (session) return;
    session = new Session();
    session.connect();
    session.post('Profiler.enable');
    session.post('Profiler.setSamplingInterval', { interval: 1000 });
    session.post('Profiler.start');
  });
  process.once('exit', () => {
    // The in-process inspector session answers synchronously, so the file is written before exit.
    session?.post('Profiler.stop', (err, result) => {
      if (!err) writeFileSync(join(dir, `${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  });
}

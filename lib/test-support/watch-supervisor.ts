import { supervisorPid, watchSupervisor } from '../supervisor-watch.js';

/**
 * Test program: prints `watching <pid>`, then runs until its supervisor (SUPERVISOR_PID) is gone,
 * checking every 200 ms; without SUPERVISOR_PID it runs until it is killed.
 */
const keepAlive = setInterval(() => undefined, 60_000);
watchSupervisor(
  supervisorPid(process.env),
  () => {
    clearInterval(keepAlive);
    process.exit(0);
  },
  200,
);
process.stdout.write(`watching ${process.pid}\n`);

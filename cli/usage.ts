/**
 * @file The CLI's help texts and its usage error (exit 2).
 */

export const EXIT_OK = 0;
export const EXIT_FAILED = 1;
export const EXIT_USAGE = 2;

/** A wrong command line: its message and the command's help go to stderr, exit 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly command?: string,
  ) {
    super(message);
  }
}

const DATA = "  --data-dir D       the world's data folder (default ./var, or STACK_DATA_DIR)";

export const HELP: Record<string, string> = {
  main: `gitlab-cells-ssh: reference GitLab cells (router, bridges, mock Rails, mock Gitaly, Topology Service)

Usage: gitlab-cells-ssh <command> [options]

Commands:
  up        start a world (foreground, or --detach)
  down      stop the world of a data folder
  status    what runs in the world of a data folder
  journal   what the world's services received (--follow to keep reading)
  control   program a service: control <target> [<cell>] <op> [json-args]
  conformance  run the router conformance kit (README "Conformance")

"gitlab-cells-ssh <command> --help" describes one command.
Exit codes: 0 ok, 1 failure, 2 usage, 78 bad topology or settings.
`,
  up: `Usage: gitlab-cells-ssh up [--topology F] [--data-dir D] [--port-offset N | --free-ports] [--edge E] [--detach]
                         [--tunnel-profile P]

Starts every service of a world and writes <data>/stack.json once all are listening.
  --topology F       a topology file (JSON); default the demo topology
${DATA}
  --port-offset N    add N to every default port
  --free-ports       let the stack pick free ports
  --edge E           the edge between the routers and every cell: none, nginx, haproxy, cloudflare,
                     or an edge file (JSON, schemas/edge.schema.json); default the topology's, else none
  --edge-time-scale X  every time of the edge multiplied by X (e.g. 0.1: Cloudflare's 15 s → 1.5 s)
  --detach           return once the world is up (prints where stack.json is); stop it with "down"
  --tunnel-profile P the gitlab-shell release shapes of the routers (gitlab-shell-14.56, -14.57.2,
                     -14.57.3, -14.57.4, -14.57.6; default the file's routers.tunnelProfile, else 14.57.6)
In the foreground, Ctrl-C stops the world.
`,
  down: `Usage: gitlab-cells-ssh down [--data-dir D]

Stops the world of the data folder (SIGTERM to its stack, which stops every service) and waits.
${DATA}
`,
  status: `Usage: gitlab-cells-ssh status [--data-dir D]

Prints the world's entry points, cells, control API and journal position; exit 1 when it is not running.
${DATA}
`,
  journal: `Usage: gitlab-cells-ssh journal [--follow] [--cell C] [--service S] [--since N] [--json]

One line per request a service received (seq, time, cell, service, method, endpoint, status, duration).
  --follow           keep reading new entries until Ctrl-C
  --cell C           only the cell C
  --service S        rails, bridge, gitaly, topology-service or control
  --since N          only entries after seq N
  --endpoint E       only endpoints containing E
  --json             the entries as NDJSON
${DATA}
`,
  control: `Usage: gitlab-cells-ssh control <target> [<cell>] <op> [json-args] [--data-dir D]

Calls one control op and prints its result as JSON. Targets: topology-service, rails <cell>,
gitaly <cell>, bridge <cell>, world; "control reset" resets every target. Examples:
  gitlab-cells-ssh control topology-service failNext '{"count":2,"code":"UNAVAILABLE"}'
  gitlab-cells-ssh control rails cell_eu0 maintenance '{"organization":"my-company","state":"time-bounded"}'
  gitlab-cells-ssh control world clockSkew '{"ms":-120000}'
${DATA}
`,
  conformance: `Usage: gitlab-cells-ssh conformance [--ssh H:P] [--http URL] [--world DIR] [--only S1,S5] [--json F] [--edge E] [--long] [--routes F]

Runs the conformance checks against a router and prints a table; exit 1 when a check fails.
  --ssh H:P          the SSH front of the router under test (default: the world's own topology router)
  --http URL         its HTTP front (default: the world's own router's, when --ssh is not given either)
  --world DIR        the data folder of a running world (up --topology conformance/world.json);
                     default: the kit starts a world of its own and stops it after
  --only S1,S5       only these checks
  --json F           also write the report as JSON to F
  --profile P        the gitlab-shell release profile of the router under test (default
                     gitlab-shell-14.57.6; also -14.56, -14.57.2, -14.57.3, -14.57.4): the FAILs
                     the profile is expected to give are reported as "expected FAIL", not exit 1
  --edge E           the edge between the router and the cells: none, nginx, haproxy, cloudflare or an
                     edge file; the kit's own world starts with it; with --world, the world's own edge
                     (stack.json) is used and must match when given
  --edge-time-scale X  the edge's times multiplied by X in the kit's own world (default 1)
  --long             run the long cases (S12, S13-long, S13-lfs) whatever they wait; without it they
                     run only when each waits at most 20 s (a scaled edge) or --only names them
                     (S13-lfs waits out a Shell JWT and Rails' 60 s leeway: never in the short set)
  --routes F         GitLab's routes snapshot (config/routing/gitlab_routes.json) for H6: every row
                     replayed through --http; without it H6 is not run
`,
};

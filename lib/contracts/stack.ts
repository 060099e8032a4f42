/**
 * @file `<data>/stack.json`: what `npm start` (`stack/main.ts`) writes once every service is ready,
 * for people, the test helpers (`test/helpers/stack.ts`) and the benchmark to find the stack by.
 * Addresses are `host:port` or URLs on the host the stack runs on.
 */
import type { TunnelProfileName } from './tunnel-profile.js';

/** One of the world's routers: its SSH front, its HTTP front, the gitlab-shell release shapes it emits. */
export interface StackRouter {
  ssh: string;
  http: string;
  /** `tunnelProfile` of the router (README "Conformance"); absent in stack.json files of older worlds. */
  tunnelProfile?: TunnelProfileName;
  /**
   * `shellJwtTtlSeconds` of the router: how long each tunnel request's Shell JWT is valid (the
   * conformance kit's S13-lfs waits it out); absent in stack.json files of older worlds.
   */
  shellJwtTtlSeconds?: number;
}

export interface StackJson {
  /** Version of this format. */
  version: 1;
  /** Absolute path of the topology file the world was started from (`lib/contracts/topology-file.ts`). */
  topologyFile: string;
  /** The world's main router: the `learn` router when the world starts it, else the `topology` router. */
  router: StackRouter;
  cells: Array<{
    id: number;
    name: string;
    legacy: boolean;
    /** URL of the cell's bridge (the router's `cells[].url`). */
    bridge: string;
    /** URL of the cell's Rails (mock cell). */
    rails: string;
    /** `host:port` of the cell's mock Gitaly. */
    gitaly: string;
    /** The folder of the cell's `default` storage. */
    storage: string;
    /** The bridge's Prometheus endpoint. */
    metrics: string;
    /**
     * The cell's front door on the gitlab-shell layout's shared port, on the cell's own loopback
     * address (`http://127.0.0.<id + 1>:<port>`): where gitlab-shell and the topology router reach the
     * cell. The bridge itself, or the edge in front of it (`edge`).
     */
    shellEndpoint: string;
  }>;
  /**
   * The HTTP edge between the routers and every cell (README "Edges"): `none` (the routers dial the
   * bridges), or a real proxy (Debian's nginx or HAProxy) with the figures it was generated with.
   */
  edge: StackEdge;
  /** The Topology Service: gRPC `host:port` and the REST base URL. */
  topologyService: { grpc: string; http: string };
  /** The router in `routing: "topology"` mode; present only when the world starts it. */
  routerTopology?: StackRouter;
  /** Its Prometheus endpoint (present with `routerTopology`). */
  routerTopologyMetrics?: string;
  /**
   * Geo secondary sites (`stack/geo-plan.ts`): the cell whose secondary it is, the site's name, its
   * SSH entry (`host:port`, a router in `site` mode), its Rails and bridge URLs, its Gitaly
   * (`host:port`) and the folder of its replica repositories (`default` storage).
   */
  geo: Array<{
    cell: string;
    site: string;
    ssh: string;
    rails: string;
    bridge: string;
    gitaly: string;
    storage: string;
  }>;
  /**
   * Every user: the files of the key pair the stack generated (`privateKey` absent when the topology
   * file gave the user's public key, then `publicKey` is that key's line in a file of the stack's).
   */
  users: Array<{ username: string; id: number; privateKey?: string; publicKey: string }>;
  projects: Array<{ path: string; cell: string; visibility: string; repository: string }>;
  /** Files holding the shell secret, the workhorse secret and the Gitaly token. */
  secrets: { shell: string; workhorse: string; gitaly: string };
  /** The Prometheus endpoint of `router`. */
  routerMetrics: string;
  /** An OpenSSH known_hosts file with the routers' host keys. */
  knownHosts: string;
  /**
   * The world's control API (HTTP on loopback, `Authorization: Bearer <contents of tokenFile>`) and
   * its journal (NDJSON, one `JournalEntry` of `lib/contracts/world.ts` per line). Added by
   * `stack/world.ts`; the routes are in README "Use as a test fixture".
   */
  control: { url: string; tokenFile: string };
  journal: string;
  /** Process id of each service by its supervisor name (`router`, `bridge-cell_us0`, …). */
  pids: Record<string, number>;
}

/** stack.json `edge`: which edge runs and where. */
export interface StackEdge {
  /** `none`, a kind (`nginx`, `haproxy`, `cloudflare`) or `file` (the user's edge file). */
  kind: 'none' | 'nginx' | 'haproxy' | 'cloudflare' | 'file';
  /** The user's edge file (`kind: "file"`). */
  file?: string;
  /** The proxy that runs (absent for `none`). */
  proxy?: 'nginx' | 'haproxy';
  /** Its generated config file (`nginx.conf`, `haproxy.cfg`) under the world's data folder. */
  configFile?: string;
  /** The proxy's process id (the supervisor's `pids.edge` is the service around it). */
  pid?: number;
  /** The figures it was generated with (times in ms, already scaled; `lib/contracts/edge-file.ts`). */
  figures?: {
    timeScale: number;
    idleBodyTimeoutMs: number;
    idleTimeoutMs: number;
    haproxyTimeoutClientMs: number;
    haproxyTimeoutServerMs: number;
    bufferSshPackBody: boolean;
    bufferResponse: boolean;
    maxBodyBytes: number;
    upstreamConnectionClose: boolean;
  };
  /** Per cell: the URL both routers dial (`dial`, the cell's `shellEndpoint`) and the bridge behind it. */
  cells: Array<{ cell: string; dial: string; bridge: string }>;
}

/**
 * @file The topology file (user-facing, versioned): the world a stack starts (`node dist/stack/main.js
 * --topology FILE`). It holds what a router developer decides — cells, organizations, namespaces,
 * projects, users, memberships — and nothing the stack decides (no URLs, ports or storages). Ids are
 * assigned by the stack in file order. `schemas/topology.schema.json` is generated from this file
 * (`npm run generate:schemas`); every JSDoc comment becomes a description there.
 */
import type { TunnelProfileName } from './tunnel-profile.js';

/** A role of a membership, as GitLab names its access levels. */
export type TopologyRole = 'guest' | 'reporter' | 'developer' | 'maintainer' | 'owner';

/** A cell of the world. */
export interface TopologyFileCell {
  /** Unique cell name, e.g. "cell_eu0". Services are named after it (`bridge-<name>`). */
  name: string;
  /** Region, e.g. "us" or "eu" (the learn router prefers a cell of its own region). */
  region: string;
  /** The legacy cell owns the fixed routes and every path no cell claims. Exactly one cell is legacy. */
  legacy?: boolean;
  /**
   * Cell id (1–253; default: the cell's position in the file, from 1). Its shell endpoint is
   * 127.0.0.<id + 1>.
   * @minimum 1
   * @maximum 253
   */
  id?: number;
  /** Prefix of the session tokens the Topology Service answers for this cell (default "cell-<id>"). */
  sessionPrefix?: string;
  /** The cell's mock Gitaly. */
  gitaly?: TopologyFileGitaly;
}

/** Settings of a cell's mock Gitaly. */
export interface TopologyFileGitaly {
  /**
   * Gitaly's `[[concurrency]]` limits, per RPC and repository (each RPC at most once). An RPC
   * without an entry is not limited, as in Gitaly.
   */
  concurrency?: GitalyConcurrencyLimit[];
}

/** A Gitaly RPC, by full method name as Gitaly's `[[concurrency]] rpc` names it. */
export type GitalyLimitedRpc =
  | '/gitaly.SSHService/SSHUploadPackWithSidechannel'
  | '/gitaly.SSHService/SSHUploadPack'
  | '/gitaly.SSHService/SSHReceivePack'
  | '/gitaly.SSHService/SSHUploadArchive'
  | '/gitaly.SmartHTTPService/InfoRefsUploadPack'
  | '/gitaly.SmartHTTPService/InfoRefsReceivePack'
  | '/gitaly.SmartHTTPService/PostUploadPackWithSidechannel'
  | '/gitaly.SmartHTTPService/PostReceivePack';

/** One `[[concurrency]]` entry of Gitaly (`max_per_repo`, `max_queue_size`, `max_queue_wait`). */
export interface GitalyConcurrencyLimit {
  /** The RPC limited. */
  rpc: GitalyLimitedRpc;
  /**
   * Calls of the RPC running at once on one repository; the next ones wait (0: no limit).
   * @minimum 0
   */
  maxPerRepo: number;
  /**
   * Calls that may wait beyond those running; the next one is refused at once with
   * `RESOURCE_EXHAUSTED` "maximum queue size reached".
   * @minimum 1
   */
  maxQueueSize: number;
  /**
   * How long a call may wait, in ms, before it is refused with `RESOURCE_EXHAUSTED` "maximum time
   * in concurrency queue reached" (default 0: no bound).
   * @minimum 0
   */
  maxQueueWaitMs?: number;
}

/** An organization: everything in it lives in its cell. */
export interface TopologyFileOrganization {
  /** Unique URL path segment, e.g. "my-organization". */
  path: string;
  /** Display name (default: the path). */
  name?: string;
  /** Name of the cell that owns the organization. */
  cell: string;
}

/** A top-level namespace: a group, or a user's personal namespace. */
export interface TopologyFileNamespace {
  /** Unique top-level path, e.g. "my-company". */
  path: string;
  /** Display name (default: the path). */
  name?: string;
  /** A group, or the personal namespace of the user of the same username (created for every user unless listed). */
  kind: 'group' | 'user';
  /** Path of the organization the namespace belongs to. */
  organization: string;
}

/** A protected branch of a project. */
export interface TopologyFileProtectedBranch {
  /** Branch name or wildcard pattern, e.g. "main" or "release/*". */
  name: string;
  /** Who may push: a role and everyone above it, or "nobody" (default "maintainer"). */
  push?: 'developer' | 'maintainer' | 'owner' | 'nobody';
  /** Whether force pushes are allowed (default false). */
  allowForcePush?: boolean;
}

/** The history of stack/git-fixture.ts: three commits on main, develop, feature/login, tags v1.0.0 and v1.1.0. */
export interface TopologyFileSeedRepository {
  /** "demo": that history; "empty": a repository without commits. */
  seed: 'demo' | 'empty';
}

/** A bare repository of the user's, copied in (mirrored) at the first start of a data folder. */
export interface TopologyFileBareRepository {
  /** Path of a bare repository, absolute or relative to the topology file. */
  bare: string;
}

/** A project: its repository lives in the cell of its namespace's organization. */
export interface TopologyFileProject {
  /**
   * Unique full path "namespace/project", e.g. "my-company/my-project".
   * @pattern ^[^/]+/[^/]+$
   */
  path: string;
  /** Visibility (default "private"). */
  visibility?: 'private' | 'internal' | 'public';
  /** Default branch (default "main"). */
  defaultBranch?: string;
  /** Protected branches (default: the default branch, Maintainers push, no force push). */
  protectedBranches?: TopologyFileProtectedBranch[];
  /** Where the repository comes from (default {"seed": "demo"}). */
  repository?: TopologyFileSeedRepository | TopologyFileBareRepository;
}

/** A user. Each gets a personal namespace (kind user) in its default organization unless one is listed. */
export interface TopologyFileUser {
  /** Unique username, e.g. "alice". */
  username: string;
  /** Display name (default: the username). */
  name?: string;
  /** An administrator (default false). */
  admin?: boolean;
  /** Path of the user's default organization. */
  defaultOrganization: string;
  /** Password of the HTML sign-in (default "<username>-password"). */
  password?: string;
  /**
   * The user's SSH public key, an OpenSSH line "<type> <base64> [comment]". Default: a key pair
   * generated per user under the data folder (stack.json lists its files).
   */
  publicKey?: string;
}

/** A membership in a group (inherited by its projects) or in one project: exactly one of the two. */
export interface TopologyFileMember {
  /** Username of the member. */
  user: string;
  /** Top-level group path (group membership). */
  namespace?: string;
  /** Full project path (project membership). */
  project?: string;
  /** The member's role. */
  role: TopologyRole;
}

/** A path the router sends to one cell whatever claims say. */
export interface TopologyFileFixedRoute {
  /** Path prefix such as "/admin", or an exact path with `exact: true`. */
  path: string;
  /** Name of the cell. */
  cell: string;
  /** Match the path exactly rather than as a prefix (default false). */
  exact?: boolean;
}

/** Which of this project's routers the world starts. */
export interface TopologyFileRouters {
  /** The `learn` router (seed 000 route learning; needs seed000Routing). Default: seed000Routing. */
  learn?: boolean;
  /** The `topology` router (asks the Topology Service, as gitlab-shell does). Default true. */
  topology?: boolean;
  /**
   * The gitlab-shell release whose tunnel request shapes every router of the world emits
   * (README "Conformance"). Default `gitlab-shell-14.57.6`; `up --tunnel-profile` overrides it.
   */
  tunnelProfile?: TunnelProfileName;
  /**
   * Seconds each tunnel request's Shell JWT of every router of the world is valid (router setting
   * `shellJwtTtlSeconds`). Default 60, gitlab-shell's; the conformance kit's world uses 5 so its
   * S13-lfs case outlasts a token in seconds (README "Conformance").
   * @minimum 1
   * @maximum 3600
   * @asType integer
   */
  shellJwtTtlSeconds?: number;
}

/** A Geo secondary site of a cell. */
export interface TopologyFileGeo {
  /** Name of the cell (the Geo primary) that gets a secondary site "<cell>-geo". */
  cell: string;
}

/** A world of GitLab cells, as `node dist/stack/main.js --topology FILE` starts it. */
export interface TopologyFile {
  /** The JSON Schema of this file, for editors (e.g. "../schemas/topology.schema.json"); not read. */
  $schema?: string;
  /** Version of this format. */
  version: 1;
  /** The cells, at least one; exactly one is legacy. */
  cells: TopologyFileCell[];
  /** The organizations. */
  organizations: TopologyFileOrganization[];
  /** Groups, and any personal namespaces to list explicitly (default: one per user). */
  namespaces?: TopologyFileNamespace[];
  /** The projects. */
  projects?: TopologyFileProject[];
  /** The users. */
  users?: TopologyFileUser[];
  /** Memberships (default none). */
  members?: TopologyFileMember[];
  /** Fixed routes (default /admin, /users, /-/profile (exact), /explore and /help on the legacy cell). */
  fixedRoutes?: TopologyFileFixedRoute[];
  /**
   * Seed 000's route-learning signals (the learn endpoint, 421 + X-Gitlab-Cell-Redirect), which no
   * GitLab component has. Default false: the cells answer as GitLab does.
   */
  seed000Routing?: boolean;
  /** Which of this project's routers to start (default: the topology router; learn = seed000Routing). */
  routers?: TopologyFileRouters;
  /** Geo secondary sites (default none). */
  geo?: TopologyFileGeo[];
  /**
   * The HTTP edge between the routers and every cell: `none` (default), `nginx`, `haproxy`,
   * `cloudflare`, or the path of an edge file (`schemas/edge.schema.json`), relative to this file.
   * `--edge` / `STACK_EDGE` override it.
   */
  edge?: string;
}

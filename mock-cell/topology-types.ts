/**
 * The topology file the mock cell serves (JSON). The stack generates it from a topology file (`stack/topology-file-convert.ts`);
 * tests may write their own. All names of cells, organizations, namespaces and users are unique.
 */
export type Visibility = 'private' | 'internal' | 'public';

/** GitLab access levels. */
export const AccessLevel = { guest: 10, reporter: 20, developer: 30, maintainer: 40, owner: 50 } as const;

export interface TopologyCell {
  id: number;
  /** e.g. "cell_us0" */
  name: string;
  /** The legacy cell owns fixed routes and unknown paths. Exactly one cell is legacy. */
  legacy?: boolean;
  /** Region used by the router to pick a cell to learn from, e.g. "us" or "eu". */
  region: string;
  /** Public URL of the cell's front door (its bridge). */
  url: string;
  gitaly: {
    /** As Rails sends it, e.g. "tcp://127.0.0.1:9001". */
    address: string;
    /** storage name → absolute folder of bare repositories. */
    storages: Record<string, string>;
  };
}

export interface TopologyOrganization {
  id: number;
  /** URL path segment, e.g. "my-organization". */
  path: string;
  name: string;
  /** Cell name that owns the organization and everything in it. */
  cell: string;
}

export interface TopologyNamespace {
  id: number;
  /** Top-level path, e.g. "my-company". */
  path: string;
  name: string;
  kind: 'group' | 'user';
  organization: string;
}

export interface ProtectedBranch {
  /** Branch name or wildcard pattern such as "release/*". */
  name: string;
  /** Minimum access level that may push (40 maintainers; 0 nobody). */
  pushAccessLevel: number;
  allowForcePush: boolean;
}

export interface TopologyProject {
  id: number;
  /** Project path inside its namespace, e.g. "my-project". */
  path: string;
  name: string;
  namespace: string;
  visibility: Visibility;
  defaultBranch: string;
  /** Storage name in the owning cell's Gitaly. */
  storage: string;
  protectedBranches: ProtectedBranch[];
}

export interface TopologyUser {
  id: number;
  username: string;
  name: string;
  admin?: boolean;
  /** Organization path of the user's default organization. */
  defaultOrganization: string;
  /** Password for the HTML sign-in of the mock cell. */
  password: string;
}

/**
 * A membership: in a group (`namespace`, inherited by all its projects) or in one project
 * (`project`, full path such as "my-company/my-project"). Exactly one of the two is set. A user's
 * access to a project is the highest level among the group membership and the project membership.
 */
export interface TopologyMember {
  user: string;
  /** Top-level namespace path (group membership). */
  namespace?: string;
  /** Full project path (project membership). */
  project?: string;
  accessLevel: number;
}

export interface TopologyKey {
  id: number;
  user: string;
  title: string;
  /** OpenSSH public key line: "<type> <base64> [comment]". */
  key: string;
}

export interface FixedRoute {
  /** Path prefix such as "/admin" or an exact path with `exact: true`. */
  path: string;
  cell: string;
  exact?: boolean;
}

/**
 * A Geo site of a cell (GitLab's `GeoNode`): the `primary` is the cell itself; a `secondary` has its
 * own Rails and Gitaly with replica repositories (`mock-cell/geo/`). Every site knows every node's key
 * pair, as GitLab replicates the `geo_nodes` table.
 */
export interface TopologyGeoSite {
  /** e.g. "cell_us0-secondary" (a mock-cell process serves it with `geoSite`). */
  name: string;
  cell: string;
  role: 'primary' | 'secondary';
  /** Internal URL of the site's Workhorse (bridge): the primary's is the base of `primary_repo`. */
  url: string;
  /** `host:port` of the site's SSH entry (shown in the console messages of a forwarded request). */
  ssh: string;
  /** A secondary's own Gitaly (the primary uses its cell's). */
  gitaly?: TopologyCell['gitaly'];
  /** The node's `access_key`, named in every `GL-Geo` token it signs. */
  accessKey: string;
  /** File (mode 600) holding the node's `secret_access_key`, the HS256 key of its tokens. */
  secretAccessKeyFile: string;
  /** A secondary's fetches go to the primary while the replica is `behind` (default) or `always`. */
  fetchFromPrimary?: 'behind' | 'always';
}

export interface Topology {
  /** Public URL users see (the router's HTTP front), for links in messages. */
  externalUrl: string;
  cells: TopologyCell[];
  organizations: TopologyOrganization[];
  namespaces: TopologyNamespace[];
  projects: TopologyProject[];
  users: TopologyUser[];
  members: TopologyMember[];
  keys: TopologyKey[];
  fixedRoutes: FixedRoute[];
  /** Geo sites (optional): at most one primary and any secondaries per cell. */
  geoSites?: TopologyGeoSite[];
  /**
   * Seed 000's route-learning signals, which no GitLab component has (`reference-cell.md` §5.2 H12):
   * the `cells/learn` endpoint, `421 Misdirected Request` + `X-Gitlab-Cell-Redirect` for a project of
   * another cell. Off (absent) answers as GitLab does: no learn endpoint (404), no 421. The demo
   * topology turns them on for the `learn` router.
   */
  seed000Routing?: boolean;
}

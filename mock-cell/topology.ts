import { readFileSync } from 'node:fs';
import { hashedRepoPath, resolveInStorage } from '../lib/repo-path.js';
import { BadRequest, NotFound, TopologyInvalid } from './errors.js';
import { publicKeyBlob } from './public-key.js';
import type {
  FixedRoute,
  Topology,
  TopologyCell,
  TopologyGeoSite,
  TopologyKey,
  TopologyNamespace,
  TopologyOrganization,
  TopologyProject,
  TopologyUser,
} from './topology-types.js';
import { validateTopology } from './topology-validate.js';

/**
 * The in-memory model of a topology file with the lookups the cell needs. Paths are looked up
 * case-insensitively, as GitLab does. The model owns its data (a private copy of the input) and
 * changes only through its methods, so every index stays consistent.
 */
export class TopologyModel {
  readonly externalUrl: string;
  readonly loadedAt = new Date();
  readonly #t: Topology;
  readonly #cells = new Map<string, TopologyCell>();
  readonly #orgs = new Map<string, TopologyOrganization>();
  readonly #namespaces = new Map<string, TopologyNamespace>();
  readonly #projectsByPath = new Map<string, TopologyProject>();
  readonly #projectsById = new Map<number, TopologyProject>();
  readonly #usersById = new Map<number, TopologyUser>();
  readonly #usersByName = new Map<string, TopologyUser>();
  readonly #keysById = new Map<number, TopologyKey>();
  readonly #keysByBlob = new Map<string, TopologyKey>();
  readonly #levels = new Map<string, number>();

  private constructor(topology: Topology) {
    this.#t = structuredClone(topology);
    this.externalUrl = this.#t.externalUrl.replace(/\/+$/, '');
    for (const c of this.#t.cells) this.#cells.set(c.name, c);
    for (const o of this.#t.organizations) this.#orgs.set(o.path.toLowerCase(), o);
    for (const n of this.#t.namespaces) this.#namespaces.set(n.path.toLowerCase(), n);
    for (const p of this.#t.projects) {
      this.#projectsByPath.set(`${p.namespace}/${p.path}`.toLowerCase(), p);
      this.#projectsById.set(p.id, p);
    }
    for (const u of this.#t.users) {
      this.#usersById.set(u.id, u);
      this.#usersByName.set(u.username.toLowerCase(), u);
    }
    for (const k of this.#t.keys) {
      this.#keysById.set(k.id, k);
      this.#keysByBlob.set(publicKeyBlob(k.key) as string, k);
    }
    for (const m of this.#t.members) {
      this.#levels.set(memberKey(m.user, m.namespace ?? m.project ?? ''), m.accessLevel);
    }
  }

  /** Validates a parsed topology (throws CELL_TOPOLOGY_INVALID) and builds the model. */
  static fromJson(value: unknown): TopologyModel {
    return new TopologyModel(validateTopology(value));
  }

  cells(): readonly TopologyCell[] {
    return this.#t.cells;
  }

  organizations(): readonly TopologyOrganization[] {
    return this.#t.organizations;
  }

  users(): readonly TopologyUser[] {
    return this.#t.users;
  }

  keys(): readonly TopologyKey[] {
    return this.#t.keys;
  }

  cell(name: string): TopologyCell | undefined {
    return this.#cells.get(name);
  }

  /** The one cell that owns fixed routes and unknown paths. */
  legacyCell(): TopologyCell {
    return this.#t.cells.find((c) => c.legacy === true) as TopologyCell;
  }

  organization(path: string): TopologyOrganization | undefined {
    return this.#orgs.get(path.toLowerCase());
  }

  namespace(path: string): TopologyNamespace | undefined {
    return this.#namespaces.get(path.toLowerCase());
  }

  namespaceById(id: number): TopologyNamespace | undefined {
    return this.#t.namespaces.find((n) => n.id === id);
  }

  organizationOf(ns: TopologyNamespace): TopologyOrganization {
    return this.organization(ns.organization) as TopologyOrganization;
  }

  /** Namespaces of an organization, in topology order. */
  namespacesOf(org: TopologyOrganization): TopologyNamespace[] {
    return this.#t.namespaces.filter((n) => n.organization.toLowerCase() === org.path.toLowerCase());
  }

  projects(): readonly TopologyProject[] {
    return this.#t.projects;
  }

  /** `ns/project` (no leading slash, no `.git`). */
  projectByPath(fullPath: string): TopologyProject | undefined {
    return this.#projectsByPath.get(fullPath.toLowerCase());
  }

  projectById(id: number): TopologyProject | undefined {
    return this.#projectsById.get(id);
  }

  /** The project's full path as stored, e.g. `my-company/my-project`. */
  fullPath(project: TopologyProject): string {
    return `${this.namespaceOf(project).path}/${project.path}`;
  }

  namespaceOf(project: TopologyProject): TopologyNamespace {
    return this.namespace(project.namespace) as TopologyNamespace;
  }

  userById(id: number): TopologyUser | undefined {
    return this.#usersById.get(id);
  }

  userByUsername(username: string): TopologyUser | undefined {
    return this.#usersByName.get(username.toLowerCase());
  }

  keyById(id: number): TopologyKey | undefined {
    return this.#keysById.get(id);
  }

  /** Looks a key up by the base64 blob of its public key line. */
  keyByBlob(blob: string): TopologyKey | undefined {
    return this.#keysByBlob.get(blob);
  }

  userOfKey(key: TopologyKey): TopologyUser {
    return this.userByUsername(key.user) as TopologyUser;
  }

  /** The user's group membership access level in a top-level namespace; 0 when not a member. */
  namespaceAccessLevel(user: TopologyUser, namespacePath: string): number {
    return this.#levels.get(memberKey(user.username, namespacePath)) ?? 0;
  }

  /** The user's access level in a project: the higher of group and project membership; 0 when none. */
  projectAccessLevel(user: TopologyUser, project: TopologyProject): number {
    const direct = this.#levels.get(memberKey(user.username, this.fullPath(project))) ?? 0;
    return Math.max(direct, this.namespaceAccessLevel(user, project.namespace));
  }

  cellOfOrganization(org: TopologyOrganization): TopologyCell {
    return this.#cells.get(org.cell) as TopologyCell;
  }

  /** The user's default organization. */
  defaultOrganizationOf(user: TopologyUser): TopologyOrganization {
    return this.organization(user.defaultOrganization) as TopologyOrganization;
  }

  cellOfNamespace(ns: TopologyNamespace): TopologyCell {
    return this.cellOfOrganization(this.organization(ns.organization) as TopologyOrganization);
  }

  cellOfProject(project: TopologyProject): TopologyCell {
    return this.cellOfNamespace(this.namespaceOf(project));
  }

  /** Seed 000's route-learning signals (learn endpoint, 421, `X-Gitlab-Cell-*`): off unless the file turns them on. */
  seed000Routing(): boolean {
    return this.#t.seed000Routing === true;
  }

  fixedRoutes(): readonly FixedRoute[] {
    return this.#t.fixedRoutes;
  }

  /** The Geo sites of the topology (`mock-cell/geo/`); none when the file has no `geoSites`. */
  geoSites(): readonly TopologyGeoSite[] {
    return this.#t.geoSites ?? [];
  }

  /** Absolute folder of the project's bare repository in its owning cell's storage. */
  repositoryDir(project: TopologyProject): string | undefined {
    const root = this.cellOfProject(project).gitaly.storages[project.storage];
    return root === undefined ? undefined : resolveInStorage(root, hashedRepoPath(project.id));
  }

  /** Projects of every namespace of an organization. */
  projectsOf(org: TopologyOrganization): TopologyProject[] {
    const namespaces = new Set(this.namespacesOf(org).map((n) => n.path.toLowerCase()));
    return this.#t.projects.filter((p) => namespaces.has(p.namespace.toLowerCase()));
  }

  /**
   * Checks a move of an organization to another cell without doing it: the organization and the
   * cell exist and the cell has every storage the organization's projects use (else BadRequest /
   * NotFound). Returns what moves.
   */
  planOrganizationMove(
    orgPath: string,
    cellName: string,
  ): { org: TopologyOrganization; from: TopologyCell; to: TopologyCell; projects: TopologyProject[] } {
    const org = this.organization(orgPath);
    if (!org) throw NotFound(`no organization with path "${orgPath}"`);
    const to = this.cell(cellName);
    if (!to) throw BadRequest(`no cell named "${cellName}"`);
    const projects = this.projectsOf(org);
    for (const p of projects) {
      if (!(p.storage in to.gitaly.storages)) {
        throw BadRequest(`cell "${to.name}" has no storage "${p.storage}" for project ${this.fullPath(p)}`);
      }
    }
    return { org, from: this.cellOfOrganization(org), to, projects };
  }

  /** Moves an organization (and every namespace and project in it) to another cell, in the model only. */
  moveOrganization(orgPath: string, cellName: string): void {
    const { org, to } = this.planOrganizationMove(orgPath, cellName);
    org.cell = to.name;
  }
}

function memberKey(username: string, target: string): string {
  return `${username.toLowerCase()}\n${target.toLowerCase()}`;
}

/** Reads, parses and validates a topology JSON file. */
export function loadTopologyFile(path: string): TopologyModel {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw TopologyInvalid(`cannot read topology file ${path}: ${(err as Error).message}`, err);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw TopologyInvalid(`topology file ${path} is not valid JSON: ${(err as Error).message}`, err);
  }
  return TopologyModel.fromJson(value);
}

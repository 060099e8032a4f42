/**
 * @file `ClassifyService/Classify`: the one decision both transports share. Claims first (the
 * newest `claims`, else gitlab-shell HEAD's single `claim`), then `type` + `value`.
 */
import type { ClassifyRequest__Output } from '../lib/generated/gitlab/cells/topology_service/ClassifyRequest.js';
import type { ClassifyResponse } from '../lib/generated/gitlab/cells/topology_service/ClassifyResponse.js';
import type { Claim__Output } from '../lib/generated/gitlab/cells/topology_service/types/v1/Claim.js';
import { type CellDirectory, parseCellId } from './cells.js';
import { claimKey, describeKey } from './claims.js';
import type { CellConfig } from './config.js';
import { ClaimNotFound, InvalidArgument } from './errors.js';
import type { ClaimStore } from './store.js';

export interface ClassifyDeps {
  cells: CellDirectory;
  store: ClaimStore;
  /** false: field 4 is ignored, as by a server built from the newest proto (it is reserved there). */
  acceptClaimField4: boolean;
}

/** The answer and, for the log line, how it was reached. */
export interface Classified {
  response: ClassifyResponse;
  cell: CellConfig;
  /** `claims`, `claim` (field 4) or the ClassifyType name. */
  by: string;
  /** What decided: `route "gitlab-org"`, `cell-2`, … */
  key: string;
}

function answer(cell: CellConfig, matched?: Claim__Output): ClassifyResponse {
  return {
    action: 'PROXY',
    proxy: { address: cell.address },
    ...(matched ? { matched_claim: matched } : {}),
  };
}

/** The ordered fallback chain: the first claim some cell holds wins; NOT_FOUND when none does. */
function byClaims(claims: readonly Claim__Output[], deps: ClassifyDeps, by: string): Classified {
  const keys = claims.map((c) => claimKey(c));
  for (const [i, key] of keys.entries()) {
    const record = deps.store.lookup(key);
    const cell = record ? deps.cells.byIdOrUndefined(record.cellId) : undefined;
    if (cell) return { response: answer(cell, claims[i]), cell, by, key: describeKey(key) };
  }
  throw ClaimNotFound(`claim does not exist: ${keys.map(describeKey).join(', ')}`);
}

function byType(req: ClassifyRequest__Output, deps: ClassifyDeps): Classified {
  const type = req.type ?? 'UNSPECIFIED';
  const value = req.value ?? '';
  let cell: CellConfig | undefined;
  switch (type) {
    case 'FIRST_CELL':
      cell = deps.cells.first();
      break;
    case 'SESSION_PREFIX':
      if (value === '') throw InvalidArgument('SESSION_PREFIX needs a value');
      cell = deps.cells.bySessionPrefix(value);
      if (!cell) throw ClaimNotFound(`no cell has session prefix ${JSON.stringify(value)}`);
      break;
    case 'CELL_ID':
      cell = deps.cells.byIdOrUndefined(parseCellId(value));
      if (!cell) throw ClaimNotFound(`cell ${value} does not exist`);
      break;
    default:
      throw InvalidArgument(`invalid type: ${JSON.stringify(String(type))}`);
  }
  return { response: answer(cell), cell, by: String(type), key: value === '' ? cell.name : value };
}

export function classify(req: ClassifyRequest__Output, deps: ClassifyDeps): Classified {
  if (req.claims && req.claims.length > 0) return byClaims(req.claims, deps, 'claims');
  if (req.claim && deps.acceptClaimField4) return byClaims([req.claim], deps, 'claim');
  return byType(req, deps);
}

/**
 * @file This project's router in `learn` mode (seed 000; README "Routing modes"): it routes by the
 * cells' `cells/learn` answers and `421` + `X-Gitlab-Cell-Redirect`, and asks the Topology Service
 * nothing. The checks of Topology-Service routing cannot pass against it by design: when the kit
 * runs against it, their FAILs are known divergences with this reason and what was seen.
 */
const NO_TOPOLOGY_SERVICE =
  'learn mode routes by the cells’ learn answers and asks the Topology Service nothing';

export const LEARN_MODE_DIVERGENCES: Readonly<Record<string, string>> = {
  S1: NO_TOPOLOGY_SERVICE,
  S2: `${NO_TOPOLOGY_SERVICE} (authorized_keys goes to the legacy cell)`,
  S5: NO_TOPOLOGY_SERVICE,
  S6: NO_TOPOLOGY_SERVICE,
  S8: NO_TOPOLOGY_SERVICE,
  H5: NO_TOPOLOGY_SERVICE,
  H6: NO_TOPOLOGY_SERVICE,
  H8: `${NO_TOPOLOGY_SERVICE}, so its outage changes nothing`,
  H9: 'learn mode serves /users/sign_in on the legacy cell (a fixed route), whatever the login',
  H12: 'learn mode follows 421 + X-Gitlab-Cell-Redirect, which the seed 000 world emits',
};

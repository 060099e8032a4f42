/** @file Every check of the kit, in the order the runner runs them. */
import type { ConformanceCheck } from '../check.js';
import { S2, S4, S8 } from './addresses.js';
import { S9, S10, S19 } from './cell-answers.js';
import { S1, S5, S6 } from './classify.js';
import { S14 } from './expired-jwt.js';
import { S13_JWT, S13_SHAPE } from './push-shape.js';
import { S11, S15, S16, S17 } from './tunnel.js';

export const CHECKS: readonly ConformanceCheck[] = [
  S1,
  S2,
  S4,
  S5,
  S6,
  S8,
  S9,
  S10,
  S11,
  S13_SHAPE,
  S13_JWT,
  S14,
  S15,
  S16,
  S17,
  S19,
];

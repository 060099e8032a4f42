/** @file Every check of the kit, in the order the runner runs them. */
import type { ConformanceCheck } from '../check.js';
import { S2, S4, S8 } from './addresses.js';
import { S9, S10, S19 } from './cell-answers.js';
import { S1, S5, S6 } from './classify.js';
import { S13_LFS } from './edge-lfs.js';
import { S12, S12_SHAPE, S13_LONG } from './edge-long.js';
import { S20 } from './edge-streaming.js';
import { S14 } from './expired-jwt.js';
import { H8, H9, H10, H12 } from './http-cells.js';
import { H1, H2, H3, H5, H7 } from './http-front.js';
import { H11 } from './http-latency.js';
import { S13_JWT, S13_SHAPE } from './push-shape.js';
import { H6 } from './routes-snapshot.js';
import { S3, S3cert, S7, S18 } from './ssh-more.js';
import { H4 } from './token-prefix.js';
import { S11, S15, S16, S17 } from './tunnel.js';

export const CHECKS: readonly ConformanceCheck[] = [
  S1,
  S2,
  S3,
  S3cert,
  S4,
  S5,
  S6,
  S7,
  S8,
  S9,
  S10,
  S11,
  S12_SHAPE,
  S12,
  S13_SHAPE,
  S13_JWT,
  S13_LONG,
  S13_LFS,
  S14,
  S15,
  S16,
  S17,
  S18,
  S19,
  S20,
  H1,
  H2,
  H3,
  H4,
  H5,
  H6,
  H7,
  H8,
  H9,
  H10,
  H11,
  H12,
];

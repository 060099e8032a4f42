import { describeTunnelLeg } from '../test-support/leg-suite.js';

/** Clone and push over cleartext HTTP/2 (prior knowledge) to the cells. */
describeTunnelLeg('h2c');

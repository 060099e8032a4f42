import { describeTunnelLeg } from '../test-support/leg-suite.js';

/** Clone and push over HTTP/1.1 to the cells (the default, as gitlab-shell). */
describeTunnelLeg('http1');

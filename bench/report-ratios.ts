import { okValue } from './outcome.js';
import { largeCloneCpu, meanCpu } from './report-cpu.js';
import {
  bridgeAndGitalyCpu,
  concurrentP99,
  defaultCipherSuffix,
  historyMedian,
  largeMedian,
  machineCpu,
  pushMedian,
  smallP50,
  tput,
} from './report-values.js';
import type { BenchResults, ThroughputId } from './results.js';
import type { AesGcmId } from './ssh-ciphers.js';
import { ratio } from './stats.js';

/** The ratios of a run, by key (their names are what the report prints), in the report's order. */

type Entries = Record<string, [string, number | undefined]>;

/** The cells path against OpenSSH over SSH, and the realistic history against direct. */
function sshRatios(r: BenchResults) {
  const cipher = defaultCipherSuffix(r);
  const gcm = r.largeCloneAesGcm;
  const gcmMedian = (id: AesGcmId) => okValue(gcm?.[id])?.medianMs;
  return {
    largeVsSsh: [
      `cells-path / OpenSSH, large clone wall time${cipher}`,
      ratio(largeMedian(r, 'cells'), largeMedian(r, 'openssh')),
    ],
    largeCpuVsSsh: [
      `cells-path / OpenSSH, large clone machine CPU per clone${cipher}`,
      ratio(machineCpu(r.largeClone?.cells), machineCpu(r.largeClone?.openssh)),
    ],
    largeVsSshAesGcm: [
      'cells-path / OpenSSH, large clone wall time (AES-GCM)',
      ratio(gcmMedian('cells'), gcmMedian('openssh')),
    ],
    largeCpuVsSshAesGcm: [
      'cells-path / OpenSSH, large clone machine CPU per clone (AES-GCM)',
      ratio(machineCpu(gcm?.cells), machineCpu(gcm?.openssh)),
    ],
    historyVsSsh: [
      'cells-path / OpenSSH, realistic-history clone wall time',
      ratio(historyMedian(r, 'cells'), historyMedian(r, 'openssh')),
    ],
    historyCpuVsSsh: [
      'cells-path / OpenSSH, realistic-history clone machine CPU per clone',
      ratio(machineCpu(r.historyClone?.cells), machineCpu(r.historyClone?.openssh)),
    ],
    historyVsDirect: [
      'cells-path / direct, realistic-history clone wall time',
      ratio(historyMedian(r, 'cells'), historyMedian(r, 'direct')),
    ],
    pushVsSsh: [
      'cells-path / OpenSSH, push (median)',
      ratio(pushMedian(r, 'cells'), pushMedian(r, 'openssh')),
    ],
    concurrentP99VsSsh: [
      `cells-path / OpenSSH, p99 of ${Math.max(...r.settings.concurrency)} concurrent small clones`,
      ratio(concurrentP99(r, 'cells'), concurrentP99(r, 'openssh')),
    ],
  } satisfies Entries;
}

/** The cells path's HTTP front against nginx + git http-backend, and the bridge's CPU HTTP / SSH. */
function httpRatios(r: BenchResults) {
  const top = Math.max(...r.settings.concurrency);
  return {
    httpLargeVsNginx: [
      'cells-path HTTP / nginx + git http-backend, large clone wall time',
      ratio(largeMedian(r, 'cells-http'), largeMedian(r, 'nginx')),
    ],
    httpLargeCpuVsNginx: [
      'cells-path HTTP / nginx + git http-backend, large clone machine CPU per clone',
      ratio(machineCpu(r.largeClone?.['cells-http']), machineCpu(r.largeClone?.nginx)),
    ],
    httpSmallVsNginx: [
      'cells-path HTTP / nginx + git http-backend, small clone p50',
      ratio(smallP50(r, 'cells-http'), smallP50(r, 'nginx')),
    ],
    httpPushVsNginx: [
      'cells-path HTTP / nginx + git http-backend, push (median)',
      ratio(pushMedian(r, 'cells-http'), pushMedian(r, 'nginx')),
    ],
    httpConcurrentP99VsNginx: [
      `cells-path HTTP / nginx + git http-backend, p99 of ${top} concurrent small clones`,
      ratio(concurrentP99(r, 'cells-http'), concurrentP99(r, 'nginx')),
    ],
    bridgeHttpVsSsh: [
      'bridge CPU per large clone, over HTTP / over the SSH tunnel',
      ratio(largeCloneCpu(r, 'cells-http')?.bridge, largeCloneCpu(r, 'cells')?.bridge),
    ],
  } satisfies Entries;
}

/** Against direct `file://`, small clones against OpenSSH, and the services' CPU against sshd's. */
function directAndServerRatios(r: BenchResults) {
  const cells = largeCloneCpu(r, 'cells');
  const sshd = largeCloneCpu(r, 'openssh')?.sshd;
  return {
    largeVsDirect: [
      'cells-path / direct, large clone wall time',
      ratio(largeMedian(r, 'cells'), largeMedian(r, 'direct')),
    ],
    smallVsSsh: [
      'cells-path / OpenSSH, small clone p50',
      ratio(smallP50(r, 'cells'), smallP50(r, 'openssh')),
    ],
    smallVsDirect: [
      'cells-path / direct, small clone p50',
      ratio(smallP50(r, 'cells'), smallP50(r, 'direct')),
    ],
    routerVsSshd: [
      'router / the OpenSSH server’s own processes, CPU per large clone (git apart)',
      ratio(cells?.router, sshd),
    ],
    bridgeVsSshd: [
      'bridge / the OpenSSH server’s own processes, CPU per large clone (git apart)',
      ratio(cells?.bridge, sshd),
    ],
    routerVsSshdAesGcm: [
      'router / the OpenSSH server’s own processes, CPU per large clone (git apart), AES-GCM',
      ratio(meanCpu(r.largeCloneAesGcm?.cells)?.router, meanCpu(r.largeCloneAesGcm?.openssh)?.sshd),
    ],
  } satisfies Entries;
}

/** The throughput contenders against each other: the floor, Gitaly direct, the transports, the modes. */
function throughputRatios(r: BenchResults) {
  const t = (a: ThroughputId, b: ThroughputId) => ratio(tput(r, a), tput(r, b));
  const cpu = (id: ThroughputId) => bridgeAndGitalyCpu(okValue(r.throughput?.[id]));
  return {
    h2VsFloor: ['bridge-only (HTTP/2) / gRPC floor, throughput', t('bridge-h2', 'grpc-floor')],
    h1VsFloor: ['bridge-only (HTTP/1.1) / gRPC floor, throughput', t('bridge-http1', 'grpc-floor')],
    h2VsDirect: [
      'bridge-only (HTTP/2) / Gitaly direct, throughput, sidechannel (the bridge’s own cost)',
      t('bridge-h2', 'gitaly-direct'),
    ],
    h1VsDirect: [
      'bridge-only (HTTP/1.1) / Gitaly direct, throughput, sidechannel',
      t('bridge-http1', 'gitaly-direct'),
    ],
    h2VsDirectStream: [
      'bridge-only (HTTP/2) / Gitaly direct, throughput, stream mode',
      t('bridge-h2-stream', 'gitaly-direct-stream'),
    ],
    h2VsH1: ['bridge-only HTTP/2 / HTTP/1.1, throughput, sidechannel', t('bridge-h2', 'bridge-http1')],
    sidechannelVsStream: [
      'sidechannel / stream mode, bridge-only HTTP/2 throughput',
      t('bridge-h2', 'bridge-h2-stream'),
    ],
    directSidechannelVsStream: [
      'sidechannel / stream mode, Gitaly direct throughput',
      t('gitaly-direct', 'gitaly-direct-stream'),
    ],
    streamVsSidechannelCpu: [
      'stream mode / sidechannel, bridge + mock Gitaly CPU per GiB (bridge-only HTTP/2, git apart)',
      ratio(cpu('bridge-h2-stream'), cpu('bridge-h2')),
    ],
  } satisfies Entries;
}

/** The ratios of a run, by key (their names are what the report prints). */
export function ratiosOf(r: BenchResults) {
  return {
    ...sshRatios(r),
    ...httpRatios(r),
    ...directAndServerRatios(r),
    ...throughputRatios(r),
  };
}

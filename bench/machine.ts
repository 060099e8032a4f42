import { cpus, loadavg, release, totalmem, type } from 'node:os';
import { projectRoot } from '../lib/proto.js';
import { nginxVersion } from './nginx.js';
import { sshdVersion } from './openssh.js';
import { commandOutput } from './proc.js';

export interface MachineInfo {
  cpuCount: number;
  cpuModel: string;
  memoryBytes: number;
  os: string;
  node: string;
  git: string;
  opensshClient: string;
  opensshServer: string;
  /** nginx and fcgiwrap package versions (absent in results written before the HTTP contenders). */
  httpServer?: string;
}

export interface RunInfo {
  date: string;
  commit: string;
  /** Uncommitted changes to tracked files when the run started. */
  dirty: boolean;
  /** 1-minute load average when the measurements started and ended: other work on the machine skews timings. */
  loadAverage: { start: number; end?: number };
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpuCount: list.length,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    memoryBytes: totalmem(),
    os: `${type()} ${release()}`,
    node: process.version,
    git: commandOutput('git', ['--version']) ?? 'unknown',
    opensshClient: commandOutput('ssh', ['-V']) ?? 'unknown',
    opensshServer: sshdVersion() ?? 'not installed',
    httpServer: nginxVersion() ?? 'nginx not installed',
  };
}

export function runInfo(): RunInfo {
  const root = projectRoot();
  const head = commandOutput('git', ['-C', root, 'rev-parse', 'HEAD']) ?? '';
  const commit = /^[0-9a-f]{40}$/.test(head) ? head : 'unknown';
  const status = commandOutput('git', ['-C', root, 'status', '--porcelain', '--untracked-files=no']) ?? '';
  return {
    date: new Date().toISOString(),
    commit,
    dirty: status !== '',
    loadAverage: { start: loadOneMinute() },
  };
}

export function loadOneMinute(): number {
  return Math.round((loadavg()[0] ?? 0) * 100) / 100;
}

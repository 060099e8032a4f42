import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { checkGitalyAuth } from '../../lib/gitaly-auth.js';
import { loadSshService, type SSHReceivePackRequest, type SSHStreamResponse } from '../../lib/proto.js';

type Request = SSHReceivePackRequest;
type Call = grpc.ServerDuplexStream<Request, SSHStreamResponse>;

/** One call as the fake saw it. */
export interface RecordedCall {
  rpc: string;
  metadata: Record<string, string>;
  first: Request;
  child?: ChildProcess;
  /** Resolves when the spawned process has exited. */
  exited: Promise<void>;
  /** stdout+stderr bytes handed to grpc-js so far. */
  bytesSent: number;
  /** The client cancelled the call. */
  cancelled: boolean;
}

/** Replaces git for one repository: run this argv instead (e.g. `['cat']` for an echo). */
export type Behaviour = { argv: string[] };

export interface FakeGitaly {
  /** `tcp://127.0.0.1:<port>`, as Rails would send it. */
  address: string;
  calls: RecordedCall[];
  /** Runs `behaviour` instead of git for requests on `relativePath`. */
  setBehaviour(relativePath: string, behaviour: Behaviour): void;
  close(): Promise<void>;
}

const RPC_GIT: Record<string, string> = {
  SSHUploadPack: 'upload-pack',
  SSHReceivePack: 'receive-pack',
  SSHUploadArchive: 'upload-archive',
};

const HUNG_UP = 'fatal: the remote end hung up unexpectedly\n';

/**
 * A grpc-js `gitaly.SSHService` for tests: checks the v2 token, then runs the real `git
 * upload-pack`/`receive-pack`/`upload-archive` on `<storage>/<relative_path>` (or a test's argv),
 * streaming stdin/stdout/stderr with backpressure and Gitaly's exit-status and error semantics.
 */
export async function startFakeGitaly(opts: { storage: string; token: string }): Promise<FakeGitaly> {
  const service = loadSshService();
  const calls: RecordedCall[] = [];
  const behaviours = new Map<string, Behaviour>();
  const server = new grpc.Server();

  const handler = (rpc: string) => (call: Call) => {
    const metadata: Record<string, string> = {};
    for (const [k, v] of Object.entries(call.metadata.getMap())) metadata[k] = String(v);
    const auth = checkGitalyAuth(metadata.authorization, opts.token);
    if (auth !== 'ok') {
      call.emit('error', {
        code: auth === 'unauthenticated' ? grpc.status.UNAUTHENTICATED : grpc.status.PERMISSION_DENIED,
        details: auth === 'unauthenticated' ? 'authentication required' : 'permission denied',
      });
      return;
    }
    call.once('data', (first: Request) => {
      const relative = first.repository?.relative_path ?? '';
      if (first.stdin && first.stdin.length > 0) {
        call.emit('error', {
          code: grpc.status.INVALID_ARGUMENT,
          details: 'non-empty stdin in first request',
        });
        return;
      }
      if (rpc === 'SSHReceivePack' && !first.gl_id) {
        call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'empty GlId' });
        return;
      }
      const argv = behaviours.get(relative)?.argv ?? gitArgv(rpc, first, join(opts.storage, relative));
      const env: NodeJS.ProcessEnv = { ...process.env };
      if (first.git_protocol === 'version=1' || first.git_protocol === 'version=2') {
        env.GIT_PROTOCOL = first.git_protocol;
      }
      const child = spawn(argv[0] as string, argv.slice(1), { env, stdio: 'pipe' });
      const record: RecordedCall = {
        rpc,
        metadata,
        first,
        child,
        bytesSent: 0,
        cancelled: false,
        exited: new Promise((resolve) => child.once('close', () => resolve())),
      };
      calls.push(record);
      pump(call, child, rpc, record);
    });
  };

  server.addService(service.service, {
    SSHUploadPack: handler('SSHUploadPack'),
    SSHReceivePack: handler('SSHReceivePack'),
    SSHUploadArchive: handler('SSHUploadArchive'),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `tcp://127.0.0.1:${port}`,
    calls,
    setBehaviour: (relativePath, behaviour) => behaviours.set(relativePath, behaviour),
    close: async () => {
      for (const c of calls) c.child?.kill('SIGKILL');
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      server.forceShutdown();
    },
  };
}

function gitArgv(rpc: string, first: Request, repoPath: string): string[] {
  const config = (first.git_config_options ?? []).flatMap((kv) => ['-c', kv]);
  return ['git', ...config, RPC_GIT[rpc] ?? 'upload-pack', repoPath];
}

function pump(call: Call, child: ChildProcess, rpc: string, record: RecordedCall): void {
  const stdin = child.stdin!;
  const stdout = child.stdout!;
  const stderr = child.stderr!;
  let stderrText = '';
  stdin.on('error', () => {});
  call.on('data', (req: Request) => {
    if (!req.stdin || req.stdin.length === 0) return;
    if (!stdin.write(req.stdin)) {
      call.pause();
      stdin.once('drain', () => call.resume());
    }
  });
  call.on('end', () => stdin.end());
  call.on('cancelled', () => {
    record.cancelled = true;
    child.kill('SIGKILL');
  });
  const send = (field: 'stdout' | 'stderr') => (chunk: Buffer) => {
    if (field === 'stderr') stderrText += chunk.toString('utf8');
    record.bytesSent += chunk.length;
    if (!call.write({ [field]: chunk })) {
      stdout.pause();
      stderr.pause();
      call.once('drain', () => {
        stdout.resume();
        stderr.resume();
      });
    }
  };
  stdout.on('data', send('stdout'));
  stderr.on('data', send('stderr'));
  child.once('close', (code, signal) => {
    if (call.cancelled) return;
    const exit = code ?? (signal ? 128 + 9 : 1);
    if (exit === 0) {
      // Gitaly's upload-archive reports success explicitly; the pack RPCs leave it absent.
      if (rpc === 'SSHUploadArchive') call.write({ exit_status: { value: 0 } });
      call.end();
      return;
    }
    call.write({ exit_status: { value: exit } });
    const hungUp = stderrText === HUNG_UP;
    call.emit('error', {
      code: hungUp ? grpc.status.CANCELLED : grpc.status.INTERNAL,
      details: hungUp
        ? 'user canceled the request'
        : `cmd wait: exit status ${exit}, stderr: ${JSON.stringify(stderrText)}`,
    });
  });
}

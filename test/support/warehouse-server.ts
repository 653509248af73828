// ClickHouse's HTTP interface over a chDB directory
// (packages/warehouse-http/scripts/serve-clickhouse-http.ts) as a process of its own on 127.0.0.1: what
// @clickhouse/client is tested against when no ClickHouse server is given, and what a fault test kills to
// make the warehouse unreachable.
import { type ChildProcess, spawn } from 'node:child_process';
import { ROOT, SOURCE_NODE_ARGS } from './processes.ts';

/**
 * Starts the server on `port` (0: any free port) and resolves with its URL once it listens. Users:
 * `default` without password (a writer), and `analyst` (read-only) when `analystPassword` is given.
 */
export async function startWarehouseServer(
  dataDir: string,
  port: number,
  options: { analystPassword?: string } = {},
): Promise<{ url: string; process: ChildProcess }> {
  const args = [
    ...SOURCE_NODE_ARGS,
    'packages/warehouse-http/scripts/serve-clickhouse-http.ts',
    dataDir,
    String(port),
  ];
  if (options.analystPassword) args.push(`--analyst-password=${options.analystPassword}`);
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`warehouse server did not start:\n${output}`)), 60_000);
    const onData = (d: Buffer) => {
      output += d;
      const m = /CLICKHOUSE_URL=(\S+)/.exec(output);
      if (m?.[1]) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`warehouse server exited with ${code}:\n${output}`));
    });
  });
  return { url, process: child };
}

/** Signals the process (SIGKILL by default) and waits until it exited. */
export const kill = (child: ChildProcess, signal: NodeJS.Signals = 'SIGKILL') =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill(signal);
  });

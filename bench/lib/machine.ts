// What the benchmarks ran on, read from the machine itself (CPU model, cores, memory, OS, Node), and how
// busy it was: other engineers' test suites share this machine and disturb the figures, so every result
// carries the load average and the busiest other processes at the time it was measured.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

export interface MachineInfo {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  kernel: string;
  node: string;
}

export function machineInfo(): MachineInfo {
  return {
    cpu: cpuModel(),
    cores: os.availableParallelism(),
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: osName(),
    kernel: `${os.type()} ${os.release()}`,
    node: process.version,
  };
}

function cpuModel(): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'));
    if (match?.[1]) return match[1].trim();
  } catch {
    // not Linux: fall through to what Node reports
  }
  return os.cpus()[0]?.model ?? 'unknown';
}

function osName(): string {
  try {
    const match = /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'));
    if (match?.[1]) return match[1];
  } catch {
    // no os-release
  }
  return `${os.type()} ${os.release()}`;
}

export interface LoadSnapshot {
  /** 1-, 5- and 15-minute load averages. */
  loadAverage: number[];
  /** Processes using the most CPU right now (ps's %CPU over their lifetime), other than ours. */
  busiest: string[];
}

/** The machine's load; `ownPids` are left out of the busiest list. */
export function loadSnapshot(ownPids: readonly number[] = []): LoadSnapshot {
  let busiest: string[] = [];
  try {
    const out = execFileSync('ps', ['-eo', 'pid,pcpu,etimes,comm', '--sort=-pcpu', '--no-headers'], {
      encoding: 'utf8',
      timeout: 5000,
    });
    busiest = out
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !ownPids.includes(Number(line.split(/\s+/)[0])))
      .filter((line) => Number(line.split(/\s+/)[1]) >= 5)
      .slice(0, 5);
  } catch {
    // ps missing: the load average alone
  }
  return { loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100), busiest };
}

/** CPU seconds the whole machine has been busy (all cores: user, system, irq), from /proc/stat. */
export function machineBusySeconds(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  // cpu  user nice system idle iowait irq softirq steal …, in USER_HZ (100 on Linux)
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  return (user + nice + system + irq + softirq) / 100;
}

/**
 * CPU seconds (user + system) a process has used so far, with its children's (those it has waited for, and
 * those still running, e.g. the wrk a load generator runs), or null when it is gone.
 */
export function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may contain spaces; fields after its closing parenthesis are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    let seconds = (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100;
    for (const child of childrenOf(pid)) seconds += processCpuSeconds(child) ?? 0;
    return seconds;
  } catch {
    return null;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

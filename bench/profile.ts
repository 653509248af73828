// Summarises a V8 CPU profile (`node --cpu-prof`, e.g. `bench/gateway.ts --cpu-prof <dir>`): where the
// time went, by function (self time) and by package, plus the inclusive time of the functions named with
// --focus, and who calls the functions named with --callers. Prints one JSON object.
//
//   node --conditions=@tally/source --import tsx bench/profile.ts <file.cpuprofile> [--top 30] [--focus name1,name2] [--callers name]
import { readFileSync } from 'node:fs';
import { parseArgs } from './lib/report.ts';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

const [file, ...rest] = process.argv.slice(2);
if (!file) throw new Error('usage: bench/profile.ts <file.cpuprofile> [--top 30] [--focus a,b]');
const options = parseArgs({ top: 30, focus: '', callers: '', depth: 3 }, rest);
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

// Self time per node, from the samples and the time between them.
const self = new Map<number, number>();
profile.samples.forEach((id, i) => {
  self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
});
const total = [...self.values()].reduce((a, b) => a + b, 0);

function packageOf(url: string): string {
  if (!url) return '(native / V8)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 'node_modules/'.length).split('/');
    return parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? url);
  }
  if (url.startsWith('node:')) return 'node (core)';
  const workspace = /\/(packages|services|bench)\/([^/]+)\//.exec(url);
  if (workspace) return `${workspace[1]}/${workspace[2]}`;
  return url;
}

const label = (n: ProfileNode) => {
  const url = n.callFrame.url.replace(/^file:\/\/.*?\/(node_modules|packages|services|bench)\//, '$1/');
  return `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
};

const functions = new Map<string, number>();
const packages = new Map<string, number>();
for (const [id, us] of self) {
  const node = byId.get(id);
  if (!node) continue;
  const name = node.callFrame.url ? label(node) : node.callFrame.functionName || '(anonymous)';
  functions.set(name, (functions.get(name) ?? 0) + us);
  const pkg = ['(idle)', '(program)', '(garbage collector)'].includes(node.callFrame.functionName)
    ? node.callFrame.functionName
    : packageOf(node.callFrame.url);
  packages.set(pkg, (packages.get(pkg) ?? 0) + us);
}

// Inclusive time of focused functions: a sample counts once for a name however deep the recursion.
const focus = String(options.focus).split(',').filter(Boolean);
const inclusive = new Map<string, number>();
if (focus.length) {
  for (const [id, us] of self) {
    const seen = new Set<string>();
    for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
      const name = byId.get(n)?.callFrame.functionName ?? '';
      if (focus.includes(name) && !seen.has(name)) {
        seen.add(name);
        inclusive.set(name, (inclusive.get(name) ?? 0) + us);
      }
    }
  }
}

// Who calls the functions named with --callers (their self time, by caller chain of --depth frames).
const callersOf = String(options.callers).split(',').filter(Boolean);
const callers = new Map<string, number>();
for (const [id, us] of self) {
  const node = byId.get(id);
  if (!node || !callersOf.includes(node.callFrame.functionName)) continue;
  const chain: string[] = [];
  for (let n = parent.get(id); n !== undefined && chain.length < Number(options.depth); n = parent.get(n)) {
    const p = byId.get(n);
    if (p) chain.push(label(p));
  }
  const key = `${node.callFrame.functionName} ← ${chain.join(' ← ')}`;
  callers.set(key, (callers.get(key) ?? 0) + us);
}

const pct = (us: number) => Math.round((us / total) * 1000) / 10;
const top = (m: Map<string, number>, n: number) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([name, us]) => ({ percent: pct(us), ms: Math.round(us / 1000), name }));

process.stdout.write(
  `${JSON.stringify(
    {
      file,
      sampledMs: Math.round(total / 1000),
      byPackage: top(packages, 25),
      bySelfTime: top(functions, Number(options.top)),
      ...(focus.length ? { inclusive: top(inclusive, focus.length) } : {}),
      ...(callersOf.length ? { callers: top(callers, 15) } : {}),
    },
    null,
    2,
  )}\n`,
);

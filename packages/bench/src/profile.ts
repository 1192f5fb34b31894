import { readFileSync } from 'node:fs';

/**
 * Reads a V8 .cpuprofile (from `node --cpu-prof`) and answers where the time went: self time per function and
 * per package, idle time left out. The same file opens as a flame graph in Chrome DevTools or speedscope.app.
 */
interface CpuProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: CpuProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  busyMs: number;
  idleMs: number;
  byPackage: Array<{ name: string; ms: number; share: number }>;
  /** Share of busy time with the package anywhere on the stack (callees included), so it can exceed self time. */
  onStack: Array<{ name: string; share: number }>;
  topFunctions: Array<{ name: string; where: string; ms: number; share: number }>;
}

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** Which package a script belongs to: the npm package, node's own code, or the app. */
export function packageOf(url: string, functionName: string): string {
  if (SPECIAL.has(functionName)) return functionName;
  if (url === '') return '(native / V8)';
  if (url.startsWith('node:')) return 'node internals';
  const file = url.replace(/^file:\/\//, '');
  const modules = file.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const parts = file.slice(modules + '/node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  if (/\/prisma\/(dist|src)\/generated\//.test(file)) return '@prisma/client (generated)';
  if (file.includes('/packages/server/') || /\/prisma\/(dist|src)\//.test(file)) return 'works-api';
  return file;
}

/** `skipMs`: leave out the first milliseconds of the profile (start-up: module loading, spec parsing). */
export function summarizeProfile(file: string, skipMs = 0, top = 25): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const selfUs = new Map<number, number>();
  let elapsedUs = 0;
  profile.samples.forEach((id, i) => {
    elapsedUs += profile.timeDeltas[i] ?? 0;
    if (elapsedUs >= skipMs * 1000) selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });

  let idleUs = 0;
  let busyUs = 0;
  const packages = new Map<string, number>();
  const functions = new Map<string, { name: string; where: string; us: number }>();
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    if (functionName === '(idle)') {
      idleUs += us;
      continue;
    }
    busyUs += us;
    const pkg = packageOf(url, functionName);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
    const where = url ? `${shortPath(url)}:${lineNumber + 1}` : '';
    const key = `${functionName}@${where}`;
    const entry = functions.get(key) ?? { name: functionName || '(anonymous)', where, us: 0 };
    entry.us += us;
    functions.set(key, entry);
  }
  const share = (us: number) => (busyUs > 0 ? us / busyUs : 0);
  const stackUs = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const frame = byId.get(at)!.callFrame;
      seen.add(packageOf(frame.url, frame.functionName));
    }
    for (const name of seen) stackUs.set(name, (stackUs.get(name) ?? 0) + us);
  }
  return {
    busyMs: busyUs / 1000,
    idleMs: idleUs / 1000,
    byPackage: [...packages]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({ name, ms: us / 1000, share: share(us) })),
    onStack: [...stackUs]
      .filter(([name]) => !SPECIAL.has(name))
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({ name, share: share(us) })),
    topFunctions: [...functions.values()]
      .sort((a, b) => b.us - a.us)
      .slice(0, top)
      .map((f) => ({ name: f.name, where: f.where, ms: f.us / 1000, share: share(f.us) })),
  };
}

function shortPath(url: string): string {
  const file = url.replace(/^file:\/\//, '');
  const modules = file.lastIndexOf('/node_modules/');
  if (modules >= 0) return file.slice(modules + '/node_modules/'.length);
  const packages = file.indexOf('/packages/');
  return packages >= 0 ? file.slice(packages + 1) : file;
}

export function formatProfile(title: string, summary: ProfileSummary): string {
  const pct = (share: number) => `${(share * 100).toFixed(1).padStart(5)}%`;
  const lines = [
    `${title}: ${summary.busyMs.toFixed(0)} ms busy, ${summary.idleMs.toFixed(0)} ms idle`,
    '  self time by package:',
    ...summary.byPackage.slice(0, 12).map((p) => `    ${pct(p.share)}  ${p.name}`),
    '  on the stack (time in the package and what it calls):',
    ...summary.onStack.slice(0, 12).map((p) => `    ${pct(p.share)}  ${p.name}`),
    '  top functions by self time:',
    ...summary.topFunctions.map((f) => `    ${pct(f.share)}  ${f.name}  ${f.where}`),
  ];
  return lines.join('\n');
}

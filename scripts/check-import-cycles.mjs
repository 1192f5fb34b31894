// `pnpm lint`: no circle of imports among the server's and the database package's modules, type-only imports
// included (a type-only circle still says two modules do not know which of them comes first).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const ts = createRequire(import.meta.url)('typescript');
const root = path.resolve(import.meta.dirname, '..');
const ROOTS = ['packages/server/src', 'prisma/src'];

const modules = ROOTS.flatMap((dir) => walk(path.join(root, dir)));
const known = new Set(modules);
const imports = new Map(modules.map((file) => [file, importsOf(file)]));

function walk(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'generated' ? [] : walk(full);
    return /\.ts$/.test(entry.name) && !/\.(test|d)\.ts$/.test(entry.name) ? [full] : [];
  });
}

function importsOf(file) {
  const { importedFiles } = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return importedFiles
    .map(({ fileName }) => fileName)
    .filter((name) => name.startsWith('.'))
    .map((name) => path.resolve(path.dirname(file), name.replace(/\.js$/, '')))
    .flatMap((base) => [`${base}.ts`, path.join(base, 'index.ts')].filter((candidate) => known.has(candidate)));
}

// Tarjan's strongly connected components: any with more than one module is a circle.
let next = 0;
const index = new Map();
const low = new Map();
const stack = [];
const circles = [];
function visit(file) {
  index.set(file, next);
  low.set(file, next++);
  stack.push(file);
  for (const target of imports.get(file)) {
    if (!index.has(target)) {
      visit(target);
      low.set(file, Math.min(low.get(file), low.get(target)));
    } else if (stack.includes(target)) low.set(file, Math.min(low.get(file), index.get(target)));
  }
  if (low.get(file) !== index.get(file)) return;
  const component = [];
  let member;
  do {
    member = stack.pop();
    component.push(path.relative(root, member));
  } while (member !== file);
  if (component.length > 1) circles.push(component);
}
for (const file of modules) if (!index.has(file)) visit(file);

if (circles.length > 0) {
  for (const circle of circles) console.error(`import circle: ${circle.join(' ↔ ')}`);
  process.exit(1);
}

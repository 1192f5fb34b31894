// Decodes the query compiler the generated client loads (a WebAssembly module shipped as a 4.6 MB base64 string in
// a JavaScript module) to dist/query-compiler.wasm, once per build: the client then compiles it from that file
// (src/query-compiler.ts), and no process keeps the string and its module's source in memory.
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const root = path.dirname(path.dirname(new URL(import.meta.url).pathname));
const generated = readFileSync(path.join(root, 'src/generated/internal/class.ts'), 'utf8');
const specifier = generated.match(/import\("(@prisma\/client\/runtime\/[^"]+\.wasm-base64\.js)"\)/)?.[1];
if (!specifier) throw new Error('the generated client no longer imports its query compiler as a base64 module');

const { wasm } = createRequire(path.join(root, 'package.json'))(specifier);
mkdirSync(path.join(root, 'dist'), { recursive: true });
writeFileSync(path.join(root, 'dist/query-compiler.wasm'), Buffer.from(wasm, 'base64'));

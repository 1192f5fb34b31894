import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { PrismaClient } from './generated/client';

/** The query compiler the build decodes (scripts/write-query-compiler.mjs): beside the package's compiled code. */
export const QUERY_COMPILER_PATH = path.join(__dirname, '..', 'dist', 'query-compiler.wasm');

// The global WebAssembly object: the package compiles against Node's types only, which leave it out.
declare const WebAssembly: { Module: new (bytes: Uint8Array) => object };

interface CompilerWasm {
  getQueryCompilerWasmModule: () => Promise<object>;
}

/**
 * Has the client compile its query compiler from the file the build decoded. Prisma's generated client imports it
 * as a 4.6 MB base64 string module instead, and the module cache keeps that module for good, its source and its
 * string both (9 MB of heap, 20 to 40 MB of a server's idle RSS).
 *
 * The hook is Prisma's engine configuration, which the client shares with every client of the process; Prisma's
 * own loader stays where it is missing (another Prisma version) or the file is (a build without the script), and
 * the function says so: src/query-compiler.test.ts fails then.
 */
export function loadQueryCompilerFromFile(client: PrismaClient): boolean {
  const engineConfig = (client as unknown as { _engineConfig?: { compilerWasm?: Partial<CompilerWasm> } })
    ._engineConfig;
  const wasm = engineConfig?.compilerWasm;
  if (typeof wasm?.getQueryCompilerWasmModule !== 'function' || !existsSync(QUERY_COMPILER_PATH)) return false;
  wasm.getQueryCompilerWasmModule = async () => new WebAssembly.Module(await readFile(QUERY_COMPILER_PATH));
  return true;
}

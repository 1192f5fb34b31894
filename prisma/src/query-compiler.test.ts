import { existsSync } from 'node:fs';
import { PrismaPg } from '@prisma/adapter-pg';
import { PrismaClient } from './generated/client';
import { loadQueryCompilerFromFile, QUERY_COMPILER_PATH } from './query-compiler';

// Node has the global WebAssembly object; the types the package compiles against leave it out.
type Module = object;
const { WebAssembly } = globalThis as unknown as {
  WebAssembly: { Module: { exports(module: Module): unknown[]; imports(module: Module): unknown[] } };
};
type Loader = { getQueryCompilerWasmModule: () => Promise<Module> };
const loaderOf = (client: PrismaClient) =>
  (client as unknown as { _engineConfig: { compilerWasm: Loader } })._engineConfig.compilerWasm;

describe('the query compiler', () => {
  it('is compiled from the file the build decoded, the same module as the one Prisma generates', async () => {
    // Never connects: only the engine's configuration is read.
    const client = new PrismaClient({ adapter: new PrismaPg({ connectionString: 'postgresql://127.0.0.1:1/none' }) });
    const generated = await loaderOf(client).getQueryCompilerWasmModule();

    expect(existsSync(QUERY_COMPILER_PATH)).toBe(true);
    expect(loadQueryCompilerFromFile(client)).toBe(true);
    const fromFile = await loaderOf(client).getQueryCompilerWasmModule();

    expect(fromFile).not.toBe(generated);
    expect(WebAssembly.Module.exports(fromFile)).toEqual(WebAssembly.Module.exports(generated));
    expect(WebAssembly.Module.imports(fromFile)).toEqual(WebAssembly.Module.imports(generated));
  });
});

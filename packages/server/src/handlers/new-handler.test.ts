import { readFileSync } from 'node:fs';
import path from 'node:path';
import { specPath } from '../http/spec';

/** scripts/new-handler.cjs (pnpm new:handler): re-adding any operation's handler gives back handlers/index.ts. */
interface Scaffold {
  planFor: (specText: string, operationId: string) => { order: string[]; file: string; importPath: string };
  withHandler: (indexText: string, operationId: string, importPath: string, order: string[]) => string;
  handlerSource: (operationId: string) => string;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const scaffold = async () => require(path.resolve(__dirname, '../../scripts/new-handler.cjs')) as Scaffold;
const spec = readFileSync(specPath, 'utf8');
const index = readFileSync(path.join(__dirname, 'index.ts'), 'utf8');
const operationIds = [...index.matchAll(/^ {2}(\w+),$/gm)].map((match) => match[1]!);

describe('new:handler', () => {
  it.each(operationIds)('puts %s where handlers/index.ts has it, and its file where it is', async (operationId) => {
    const { planFor, withHandler } = await scaffold();
    const plan = planFor(spec, operationId);
    const without = index
      .split('\n')
      .filter((line) => !line.includes(`{ ${operationId} }`) && line.trim() !== `${operationId},`)
      .join('\n');
    expect(withHandler(without, operationId, plan.importPath, plan.order)).toBe(index);
    expect(index).toContain(`from '${plan.importPath}';`);
    expect(readFileSync(path.resolve(__dirname, '../..', plan.file), 'utf8')).toContain(`Handler<'${operationId}'>`);
  });

  it('refuses an operation the spec does not have', async () => {
    const { planFor } = await scaffold();
    expect(() => planFor(spec, 'getNothing')).toThrow(
      'openapi/api.yaml has no operation getNothing: add it to the spec first',
    );
  });
});

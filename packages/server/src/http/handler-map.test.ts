import { handlers } from '../handlers';
import { loadSpec } from './spec';
import type { HandlerMap } from './handler';

describe('handler map', () => {
  it('has exactly one handler per operation of the contract', () => {
    const operationIds = loadSpec()
      .operations.map((operation) => operation.operationId)
      .sort();
    expect(Object.keys(handlers).sort()).toEqual(operationIds);
  });

  it('fails to compile when an operation has no handler', () => {
    const { getMe, ...allButOne } = handlers;
    // @ts-expect-error getMe is missing, so this is not a HandlerMap (checked by `pnpm typecheck`).
    const incomplete: HandlerMap = allButOne;
    expect(Object.keys(incomplete)).not.toContain('getMe');
    expect(getMe).toBeInstanceOf(Function);
  });
});

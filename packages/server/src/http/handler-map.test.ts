import { handlers } from '../handlers';
import { account } from '../handlers/account';
import { admin } from '../handlers/admin';
import { members } from '../handlers/members';
import { recipients } from '../handlers/recipients';
import { requests } from '../handlers/requests';
import { sessions } from '../handlers/sessions';
import { tenants } from '../handlers/tenants';
import { webhooks } from '../handlers/webhooks';
import { works } from '../handlers/works';
import { HTTP_METHODS, loadSpec } from './spec';
import type { HandlerMap } from '../handlers/types';

describe('handler map', () => {
  it('has exactly one handler per operation of the contract', () => {
    const operationIds = loadSpec()
      .operations.map((operation) => operation.operationId)
      .sort();
    expect(Object.keys(handlers).sort()).toEqual(operationIds);
  });

  it('keeps each operation in the file of its tag', () => {
    const paths = loadSpec().document['paths'] as Record<
      string,
      Record<string, { operationId: string; tags: string[] }>
    >;
    const byTag = new Map<string, string[]>();
    for (const item of Object.values(paths)) {
      for (const method of HTTP_METHODS) {
        const operation = item[method];
        if (!operation) continue;
        const tag = operation.tags[0]!.toLowerCase();
        byTag.set(tag, [...(byTag.get(tag) ?? []), operation.operationId]);
      }
    }
    const files = { account, admin, members, recipients, requests, sessions, tenants, webhooks, works };
    expect(Object.fromEntries(Object.entries(files).map(([tag, file]) => [tag, Object.keys(file).sort()]))).toEqual(
      Object.fromEntries([...byTag].map(([tag, operationIds]) => [tag, operationIds.sort()])),
    );
  });

  it('fails to compile when an operation has no handler', () => {
    const { getMe, ...allButOne } = handlers;
    // @ts-expect-error getMe is missing, so this is not a HandlerMap (checked by `pnpm typecheck`).
    const incomplete: HandlerMap = allButOne;
    expect(Object.keys(incomplete)).not.toContain('getMe');
    expect(getMe).toBeInstanceOf(Function);
  });
});

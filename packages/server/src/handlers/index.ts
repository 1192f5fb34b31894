import type { HandlerMap } from './types';
import { account } from './account';
import { admin } from './admin';
import { members } from './members';
import { recipients } from './recipients';
import { requests } from './requests';
import { sessions } from './sessions';
import { tenants } from './tenants';
import { webhooks } from './webhooks';
import { works } from './works';

/**
 * Every operation of openapi/api.yaml and its handler, one file per tag. `satisfies HandlerMap` makes a missing
 * operation a compile error here; `satisfies Partial<HandlerMap>` in each file types each handler by its key and
 * makes a misspelt one a compile error there.
 */
export const handlers = {
  ...admin,
  ...account,
  ...sessions,
  ...tenants,
  ...members,
  ...works,
  ...requests,
  ...webhooks,
  ...recipients,
} satisfies HandlerMap;

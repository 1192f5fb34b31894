import type { Request } from 'express';

// No imports beyond types: observability/http.ts uses it too, and must not load the domain (or Prisma) early.
/** The token of an `Authorization: Bearer <token>` header; undefined when there is none or it is not a bearer token. */
export const bearerToken = (req: Pick<Request, 'headers'>): string | undefined =>
  /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? '')?.[1];

import type { AddressInfo } from 'node:net';
import express from 'express';
import * as OpenApiValidator from 'express-openapi-validator';
import { closedDocument, loadSpec } from '../../src/http/spec';

/**
 * The response check every test server runs (app.ts with `validateResponses`), as configured there, in front of a
 * route that answers what the test says: what it lets through and what it refuses. Our patch to the validator
 * hides the contract it attaches to each route's schema from Ajv's walk for `$id`s; the references into it must
 * still resolve, or a wrong response would pass.
 */
async function answering(body: unknown): Promise<{ status: number; errors: unknown[] }> {
  const errors: unknown[] = [];
  const app = express();
  app.use(
    OpenApiValidator.middleware({
      apiSpec: closedDocument(loadSpec().document) as never,
      validateRequests: false,
      validateResponses: true,
      validateSecurity: false,
      $refParser: { mode: 'dereference' },
    }),
  );
  app.get('/v1/me', (_req, res) => void res.json(body));
  app.use((error: unknown, _req: express.Request, res: express.Response, _next: express.NextFunction) => {
    errors.push(error);
    res.status(500).end();
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  try {
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/me`);
    return { status: res.status, errors };
  } finally {
    server.close();
  }
}

const user = {
  id: '0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b',
  firstName: 'Ada',
  lastName: 'Lovelace',
  email: 'ada@example.com',
  createdAt: '2026-11-22T10:15:00.000Z',
};

describe('the response check of the test servers', () => {
  it('passes a response as documented', async () => {
    expect(await answering({ user })).toEqual({ status: 200, errors: [] });
  });

  it('refuses an undocumented property, a missing one and a wrong type, deep in referenced schemas', async () => {
    for (const wrong of [
      { user: { ...user, colour: 'teal' } },
      { user: { ...user, email: undefined } },
      { user: { ...user, createdAt: 12 } },
    ]) {
      const { status, errors } = await answering(wrong);
      expect(status).toBe(500);
      expect(String(errors[0])).toMatch(/response/);
    }
  });
});

import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createClient } from '../src';
import { closeScriptedServers, scriptedServer } from './support';

afterEach(() => closeScriptedServers());

const run = promisify(execFile);
const example = join(__dirname, '..', 'examples', 'bulk-send.mjs');

// A day a month ahead, as a spreadsheet writes a date.
const dueDay = new Date(Date.now() + 30 * 86_400_000).toISOString().slice(0, 10);
const csv = [
  '\uFEFFEmail,First name,Last name,Title,Message,Due date',
  `grace@example.com,Grace,Hopper,,,${dueDay}`,
  '"ada@example.com",Ada,"Lovelace, Countess",Own title,"Line one',
  'line two",',
].join('\r\n');

describe('createRequestBatch', () => {
  it('is a typed method that sends one Idempotency-Key per batch', async () => {
    const server = await scriptedServer([{ status: 201, body: { batch: { count: 1, requests: [] } } }]);
    const client = createClient({ baseUrl: server.baseUrl, apiKey: 'k' });
    await client.createRequestBatch({
      params: { path: { tenant_id: 't1', work_id: 'w1' } },
      body: { defaults: { title: 'Balance' }, items: [{ recipient: { email: 'grace@example.com' } }] },
    });
    expect(server.received[0]).toMatchObject({ method: 'POST', url: '/v1/tenants/t1/works/w1/request-batches' });
    expect(server.received[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('examples/bulk-send.mjs', () => {
  it('reads a CSV (quotes, line breaks, a BOM, CRLF) into one batch, with the defaults given', async () => {
    const server = await scriptedServer([
      {
        status: 201,
        body: {
          batch: {
            count: 2,
            requests: [
              { id: 'r1', recipient: { email: 'grace@example.com' }, emailsStopped: false },
              { id: 'r2', recipient: { email: 'ada@example.com' }, emailsStopped: true },
            ],
          },
        },
      },
    ]);
    const file = join(mkdtempSync(join(tmpdir(), 'bulk-')), 'recipients.csv');
    writeFileSync(file, csv);
    const { stdout } = await run(
      process.execPath,
      [example, 't1', 'w1', file, '--title', 'Confirm your balance', '--base-url', server.baseUrl],
      { env: { ...process.env, WORKS_API_KEY: 'k' } },
    );
    expect(JSON.parse(server.received[0]!.body)).toEqual({
      defaults: { title: 'Confirm your balance' },
      items: [
        {
          recipient: { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' },
          dueAt: `${dueDay}T23:59:59Z`,
        },
        {
          recipient: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace, Countess' },
          title: 'Own title',
          message: 'Line one\r\nline two',
        },
      ],
    });
    expect(stdout).toContain('r2  ada@example.com  emails stopped');
  });

  it('prints every bad row the server names as a line of the file, and exits 1', async () => {
    const server = await scriptedServer([
      {
        status: 400,
        body: {
          type: 'https://works-api.dev/problems/validation_failed',
          title: 'Invalid request',
          status: 400,
          detail: 'The batch breaks the contract.',
          instance: '/v1/tenants/t1/works/w1/request-batches',
          code: 'validation_failed',
          errors: [
            { path: '/body/items/1/recipient/email', message: 'items.1.recipient.email must be an email address' },
          ],
        },
      },
    ]);
    const file = join(mkdtempSync(join(tmpdir(), 'bulk-')), 'recipients.csv');
    writeFileSync(file, 'email\tfirst name\ngrace@example.com\tGrace\nnot-an-email\tX\n');
    const failure = await run(process.execPath, [example, 't1', 'w1', file, '--base-url', server.baseUrl], {
      env: { ...process.env, WORKS_API_KEY: 'k' },
    }).catch((error: { code: number; stderr: string }) => error);
    expect('code' in failure && failure.code).toBe(1);
    expect((failure as { stderr: string }).stderr).toContain(
      'line 3: items.1.recipient.email must be an email address',
    );
  });
});

import { Writable } from 'node:stream';
import pino from 'pino';
import { createUserCommand, entryPoints, startupBanner } from '../http/entry-points';
import { prettyStdout, resolveLogFormat } from './logger';

describe('the log format', () => {
  it.each([
    ['auto', true, 'pretty'],
    ['auto', false, 'json'],
    ['json', true, 'json'],
    ['pretty', false, 'pretty'],
  ] as const)('LOG_FORMAT=%s with stdout a TTY: %s → %s', (format, isTTY, expected) => {
    expect(resolveLogFormat(format, isTTY)).toBe(expected);
  });

  it('pretty prints a line a person reads: time, level, message and fields, no JSON', () => {
    let written = '';
    const into = new Writable({
      write(chunk: Buffer, _encoding, done) {
        written += chunk.toString('utf8');
        done();
      },
    });
    pino({ base: undefined }, prettyStdout(false, into)).info({ reqId: 'r1' }, 'works-api listening');
    expect(written).toMatch(/^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: works-api listening\n {4}reqId: "r1"\n$/);
  });
});

describe('the start-up lines', () => {
  const points = entryPoints('http://127.0.0.1:3000', false);

  it('name the API, the reference and the contract, and the console only once it is built', () => {
    expect(points).toEqual({
      api: 'http://127.0.0.1:3000/v1',
      docs: 'http://127.0.0.1:3000/docs',
      openapi: 'http://127.0.0.1:3000/openapi.yaml',
    });
    expect(entryPoints('http://127.0.0.1:3000', true).console).toBe('http://127.0.0.1:3000/console');
  });

  it('give the command to create a first user as it is typed, not as an escaped JSON string', () => {
    const command = createUserCommand(points.api);
    expect(command).toBe(
      `curl -X POST http://127.0.0.1:3000/v1/admin/users -H "Authorization: Bearer $ADMIN_TOKEN" -H "Content-Type: application/json" -d '{"email":"you@example.com","firstName":"Ada","lastName":"Lovelace"}'`,
    );
    expect(startupBanner(points, true)).toContain(`  ${command}`);
    expect(startupBanner(points, false).join('\n')).toContain('ADMIN_TOKEN is not set');
  });
});

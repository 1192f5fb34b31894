// A smoke test of `pnpm bench -- --scale`, so that it cannot rot: the small data set on PGlite, the scale mode's
// own scenarios and the write path into the big work, one second each. Not a measurement: it checks that every
// scenario is answered without an error on both the empty database and the loaded one.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';
import type { ScaleResult } from './scale';

const SCENARIOS = [
  'list-tenants',
  'create-popular-tenant',
  'list-all-requests',
  'deep-page',
  'list-members',
  'list-api-keys',
  'list-tenant-requests',
  'search-works',
  'search-works-common',
  'search-works-rare',
  'search-works-middling',
  'search-requests',
  'search-requests-common',
  'search-requests-rare',
  'search-requests-middling',
  'inbox-confirmed',
  'inbox-recipient',
  'events-feed',
  'create-request',
  'list-requests',
];

it('the scale mode loads the small data set into PGlite and runs its scenarios on both databases', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'works-api-bench-scale-test-'));
  const out = path.join(dir, 'results.json');
  try {
    await promisify(execFile)(
      process.execPath,
      [
        path.join(__dirname, 'main.js'),
        '--scale',
        '--only',
        'pglite',
        '--shape',
        'small',
        '--duration',
        '1',
        '--warmup',
        '0',
        '--connections',
        '2',
        '--scenarios',
        SCENARIOS.join(','),
        '--out',
        out,
      ],
      { timeout: 240_000, maxBuffer: 16 * 1024 * 1024 },
    );
    const report = JSON.parse(readFileSync(out, 'utf8')) as { scale: ScaleResult[] };
    assert.equal(report.scale.length, 1);
    const [pglite] = report.scale;
    assert.equal(pglite!.shapeName, 'small');
    assert.equal(pglite!.shape.bigWorkRequests, 20_000);
    assert.ok(pglite!.loadMs > 0);
    assert.deepEqual(pglite!.scenarios.map((s) => s.id).sort(), [...SCENARIOS].sort());
    // Reads first, on a database the writes have not grown yet; the popular-name create last.
    assert.deepEqual(
      pglite!.scenarios.map((s) => s.kind),
      [...Array<string>(SCENARIOS.length - 2).fill('read'), 'write', 'write'],
    );
    assert.equal(pglite!.scenarios.at(-1)!.id, 'create-popular-tenant');
    for (const s of pglite!.scenarios) {
      for (const [phase, m] of [
        ['empty', s.empty],
        ['large', s.large],
      ] as const) {
        assert.equal(m.errors, 0, `${s.title} (${phase}): ${JSON.stringify(m.statusCodes)}`);
        assert.ok(
          Object.keys(m.statusCodes).every((code) => code.startsWith('2')),
          `${s.title} (${phase}): ${JSON.stringify(m.statusCodes)}`,
        );
      }
      assert.ok(s.empty.requests > 0, `${s.title}: no answer on the empty database`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

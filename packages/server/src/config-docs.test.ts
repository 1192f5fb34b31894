import { readFileSync } from 'node:fs';
import path from 'node:path';
import { environment, repoRoot } from './config';

/**
 * docs/configuration.md cannot drift from the configuration module: its table names every variable the server
 * reads (`environment`, plus those read outside it), and each documented default is what the module applies.
 */
const doc = readFileSync(path.join(repoRoot, 'docs/configuration.md'), 'utf8');

/** The table's rows: the variables of the first cell (`A`, `B`, …) and the default cell. */
const rows = doc
  .split('\n')
  .filter((line) => /^\| `[A-Z]/.test(line))
  .map((line) => {
    const [names = '', defaultCell = ''] = line.split('|').slice(1, 3);
    return {
      names: [...names.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((match) => match[1]!),
      defaultCell: defaultCell.trim(),
    };
  });
const documented = new Map(rows.flatMap((row) => row.names.map((name) => [name, row.defaultCell] as const)));

/** Read outside `environment`: the cluster's size, and the OpenTelemetry SDK's own variables. */
const READ_ELSEWHERE = ['WEB_CONCURRENCY', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_TRACES_EXPORTER', 'OTEL_SERVICE_NAME'];

/** Defaults that depend on the machine or on other variables, so the page says them in words. */
const DESCRIBED_DEFAULTS = new Set(['PGLITE_DIR', 'DEV_MAILBOX', 'PUBLIC_URL', 'SIGNUP']);

describe('docs/configuration.md', () => {
  it('names every variable the configuration module reads, and no other', () => {
    const read = [...Object.keys(environment.shape), ...READ_ELSEWHERE].sort();
    const named = [...documented.keys()].filter((name) => !name.startsWith('OTEL_') || READ_ELSEWHERE.includes(name));
    expect(named.sort()).toEqual(read);
  });

  it.each(Object.keys(environment.shape).filter((name) => !DESCRIBED_DEFAULTS.has(name)))(
    "documents %s's default as the module applies it",
    (name) => {
      const schema = environment.shape[name as keyof typeof environment.shape];
      const cell = documented.get(name);
      const applied: unknown = schema.parse(undefined);
      if (cell === 'unset') {
        expect([undefined, []]).toContainEqual(applied); // nothing, or an empty list
        return;
      }
      const written = /^`([^`]*)`$/.exec(cell ?? '')?.[1];
      expect(written).toBeDefined();
      expect(schema.parse(written)).toEqual(applied);
    },
  );
});

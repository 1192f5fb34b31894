// The contract's CI gates, shown to fail on purpose-made drift: each test breaks a copy of openapi/api.yaml (or
// of what is generated from it) in one known way and checks that the gate catches it, and that the real files
// pass. Run with `node --test` (`pnpm --filter @works-api/openapi test`).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const openapiDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(openapiDir, '..');
const specText = readFileSync(path.join(openapiDir, 'api.yaml'), 'utf8');
const redocly = path.join(path.dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')), 'bin', 'cli.js');
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', NO_COLOR: '1' };

const scratch = mkdtempSync(path.join(tmpdir(), 'works-api-gates-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
let scratchCount = 0;
const scratchDir = () => {
  const dir = path.join(scratch, String(++scratchCount));
  mkdirSync(dir, { recursive: true });
  return dir;
};

/** The spec with `from` (which must occur exactly once) replaced by `to`. */
function mutate(text, from, to) {
  assert.equal(text.split(from).length, 2, `expected exactly one occurrence of:\n${from}`);
  return text.replace(from, to);
}

function lint(text) {
  const file = path.join(scratchDir(), 'api.yaml');
  writeFileSync(file, text);
  const result = spawnSync(process.execPath, [redocly, 'lint', file, '--config', path.join(openapiDir, 'redocly.yaml'), '--format=stylish', '--max-problems=100000'], {
    encoding: 'utf8',
    env,
  });
  return { status: result.status, output: result.stdout + result.stderr };
}

describe('redocly lint (recommended + our rules)', () => {
  it('passes on openapi/api.yaml', () => {
    const { status, output } = lint(specText);
    assert.equal(status, 0, output);
  });

  // Each mutation breaks one rule; all are applied to one copy (one lint run) and every rule must be reported.
  const mutations = [
    {
      rule: 'rule/property-camel-case',
      from: "    CreateTenantBody:\n      type: object\n      additionalProperties: false\n      required: [name]\n      properties:\n",
      to: "    CreateTenantBody:\n      type: object\n      additionalProperties: false\n      required: [name]\n      properties:\n        billing_email:\n          $ref: '#/components/schemas/Email'\n",
    },
    { rule: 'rule/operation-id-naming', from: 'operationId: getMe\n', to: 'operationId: fetch_me\n' },
    {
      rule: 'works-api/problem-responses', // getMe no longer documents its 401
      from: "          $ref: '#/components/responses/BadRequest'\n        '401':\n          $ref: '#/components/responses/Unauthorized'\n        '429':\n          $ref: '#/components/responses/TooManyRequests'\n        '500':\n          $ref: '#/components/responses/InternalError'\n\n  /api-keys:",
      to: "          $ref: '#/components/responses/BadRequest'\n        '429':\n          $ref: '#/components/responses/TooManyRequests'\n        '500':\n          $ref: '#/components/responses/InternalError'\n\n  /api-keys:",
    },
    {
      rule: 'works-api/problem-responses', // a 4xx that is not problem+json
      from: "          $ref: '#/components/headers/XRequestId'\n      content:\n        application/problem+json:\n          schema:\n            $ref: '#/components/schemas/Problem'\n          example:\n            type: https://works-api.dev/problems/forbidden",
      to: "          $ref: '#/components/headers/XRequestId'\n      content:\n        application/json:\n          schema:\n            $ref: '#/components/schemas/Problem'\n          example:\n            type: https://works-api.dev/problems/forbidden",
    },
    { rule: 'works-api/schema-example', from: '      example:\n        name: Acme Research Lab\n', to: '' },
    {
      rule: 'works-api/parameter-example',
      from: '        maxLength: 200\n        example: djE6MDE5M2ExYjItN2MzZC03ZTRmLThhOWItMGMxZDJlM2Y0YTVi\n    IdempotencyKey:',
      to: '        maxLength: 200\n    IdempotencyKey:',
    },
    { rule: 'works-api/bounded-values', from: '      maxLength: 254\n', to: '' },
    { rule: 'works-api/bounded-values', from: '              maxItems: 1000\n', to: '' },
    {
      rule: 'works-api/closed-objects',
      from: '    UpdateMemberBody:\n      type: object\n      additionalProperties: false\n',
      to: '    UpdateMemberBody:\n      type: object\n',
    },
    { rule: 'works-api/operation-security', from: 'operationId: listApiKeys\n', to: 'operationId: listApiKeys\n      security: []\n' },
    { rule: 'no-invalid-schema-examples', from: '        role: admin\n    CreateWorkBody:', to: '        role: superuser\n    CreateWorkBody:' },
    { rule: 'operation-description', from: '      description: The user the API key belongs to.\n', to: '' },
  ];

  it('reports every purpose-made violation under its rule', () => {
    const broken = mutations.reduce((text, { from, to }) => mutate(text, from, to), specText);
    const { status, output } = lint(broken);
    assert.notEqual(status, 0, 'lint must fail');
    for (const { rule } of mutations) assert.match(output, new RegExp(` ${rule.replace('/', '\\/')} `), `${rule} was not reported`);
  });
});

describe('generated types (openapi-typescript --check)', () => {
  const apiTypes = path.join(repoRoot, 'packages', 'api-types');
  const bin = path.join(apiTypes, 'node_modules', '.bin', 'openapi-typescript');
  const committed = readFileSync(path.join(apiTypes, 'src', 'schema.d.ts'), 'utf8');

  function check(spec, types) {
    const dir = scratchDir();
    writeFileSync(path.join(dir, 'api.yaml'), spec);
    writeFileSync(path.join(dir, 'schema.d.ts'), types);
    return spawnSync(bin, ['api.yaml', '--output', 'schema.d.ts', '--check'], { cwd: dir, encoding: 'utf8', env }).status;
  }

  it('passes when the committed types are what the spec produces', () => assert.equal(check(specText, committed), 0));
  it('fails when the spec changed and the types were not regenerated', () => {
    const changed = mutate(specText, "    CreateTenantBody:\n      type: object\n", "    CreateTenantBody:\n      type: object\n      description: What a new tenant needs.\n");
    assert.notEqual(check(changed, committed), 0);
  });
  it('fails when the generated file was edited by hand', () => {
    assert.notEqual(check(specText, committed.replace('export interface paths {', 'export interface paths {\n    "/extra": never;')), 0);
  });
});

describe("the client's operation table (generate-operations --check)", async () => {
  const { generate } = await import(path.join(repoRoot, 'packages', 'client', 'scripts', 'generate-operations.mjs'));
  const committed = readFileSync(path.join(repoRoot, 'packages', 'client', 'src', 'operations.ts'), 'utf8');

  it('matches the spec', () => assert.equal(generate(specText), committed));
  it('differs once an operation is added', () => {
    const spec = mutate(specText, '  /me:\n    get:\n', '  /me:\n    delete:\n      operationId: removeMe\n      responses: {}\n    get:\n');
    assert.notEqual(generate(spec), committed);
    assert.match(generate(spec), /removeMe: \{ method: 'delete', path: '\/me', creates: false \}/);
  });
});

describe('breaking-change check (redocly diff against the previous commit)', () => {
  const script = path.join(openapiDir, 'scripts', 'check-breaking.mjs');

  /** A scratch git repository whose history holds the given versions of openapi/api.yaml, one commit each. */
  function repoWith(...versions) {
    const dir = scratchDir();
    const git = (...args) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
    git('init', '--quiet', '--initial-branch=main');
    git('config', 'user.email', 'ci@example.com');
    git('config', 'user.name', 'CI');
    mkdirSync(path.join(dir, 'openapi'));
    cpSync(path.join(openapiDir, 'BREAKING_CHANGES_ACCEPTED'), path.join(dir, 'openapi', 'BREAKING_CHANGES_ACCEPTED'));
    versions.forEach((text, index) => {
      writeFileSync(path.join(dir, 'openapi', 'api.yaml'), text);
      git('add', '-A');
      git('commit', '--quiet', '-m', `version ${index + 1}`);
    });
    return { dir, git };
  }
  const check = (dir) => {
    const result = spawnSync(process.execPath, [script], { cwd: dir, encoding: 'utf8', env: { ...env, API_BASE_REF: '' } });
    return { status: result.status, output: result.stdout + result.stderr };
  };
  const removeMe = (text) => text.slice(0, text.indexOf('  /me:\n')) + text.slice(text.indexOf('  /api-keys:\n'));
  const addOptionalField = (text) =>
    mutate(text, "      properties:\n        name:\n          $ref: '#/components/schemas/Name'\n      example:\n        name: Acme Research\n", "      properties:\n        name:\n          $ref: '#/components/schemas/Name'\n        note:\n          $ref: '#/components/schemas/LongText'\n      example:\n        name: Acme Research\n");

  it('passes on a first commit (nothing to compare)', () => {
    const { dir } = repoWith(specText);
    const { status, output } = check(dir);
    assert.equal(status, 0, output);
    assert.match(output, /nothing can break yet/);
  });
  it('passes an additive change', () => {
    const { dir } = repoWith(specText, addOptionalField(specText));
    const { status, output } = check(dir);
    assert.equal(status, 0, output);
  });
  it('fails when an operation is removed', () => {
    const { dir } = repoWith(specText, removeMe(specText));
    const { status, output } = check(dir);
    assert.equal(status, 1, output);
    assert.match(output, /Path `\/me` was removed/);
  });
  it('fails when a request body gains a required property', () => {
    const { dir } = repoWith(specText, mutate(specText, 'required: [title, recipient]', 'required: [title, recipient, dueAt]'));
    const { status, output } = check(dir);
    assert.equal(status, 1, output);
    assert.match(output, /became required: `dueAt`/);
  });
  it('passes a breaking change once BREAKING_CHANGES_ACCEPTED gains a line in the same change', () => {
    const { dir, git } = repoWith(specText, removeMe(specText));
    const accepted = path.join(dir, 'openapi', 'BREAKING_CHANGES_ACCEPTED');
    writeFileSync(accepted, `${readFileSync(accepted, 'utf8')}\n# a comment alone does not count\n`);
    assert.equal(check(dir).status, 1, 'a comment is no acceptance');
    writeFileSync(accepted, `${readFileSync(accepted, 'utf8')}2026-11-23 GET /me removed: replaced by GET /users/me.\n`);
    git('commit', '--quiet', '--amend', '-a', '--no-edit');
    const { status, output } = check(dir);
    assert.equal(status, 0, output);
    assert.match(output, /accepted as intentional/);
  });
});

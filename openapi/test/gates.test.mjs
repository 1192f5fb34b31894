// The contract's CI gates, shown to fail on purpose-made drift: each test breaks a copy of openapi/api.yaml (or
// of what is generated from it) in one known way and checks that the gate catches it, and that the real files
// pass. Run with `node --test` (`pnpm --filter @works-api/openapi test`).
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const openapiDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = path.resolve(openapiDir, '..');
const specText = readFileSync(path.join(openapiDir, 'api.yaml'), 'utf8');
const redocly = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')),
  'bin',
  'cli.js',
);
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
  const dir = scratchDir();
  const file = path.join(dir, 'api.yaml');
  writeFileSync(file, text);
  // The config beside the copy, with its plugins and its ignore file (whose entries name `api.yaml` relative to it).
  for (const name of ['redocly.yaml', '.redocly.lint-ignore.yaml', 'plugins']) {
    cpSync(path.join(openapiDir, name), path.join(dir, name), { recursive: true });
  }
  const result = spawnSync(
    process.execPath,
    [redocly, 'lint', file, '--config', path.join(dir, 'redocly.yaml'), '--format=stylish', '--max-problems=100000'],
    {
      encoding: 'utf8',
      env,
    },
  );
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
      from: '    CreateTenantBody:\n      type: object\n      additionalProperties: false\n      required: [name]\n      properties:\n',
      to: "    CreateTenantBody:\n      type: object\n      additionalProperties: false\n      required: [name]\n      properties:\n        billing_email:\n          $ref: '#/components/schemas/Email'\n",
    },
    { rule: 'rule/operation-id-naming', from: 'operationId: getMe\n', to: 'operationId: fetch_me\n' },
    {
      rule: 'works-api/operation-scope', // listApiKeys names a scope the Scope schema does not have
      from: '      x-required-scope: account:manage\n      summary: List my API keys\n',
      to: '      x-required-scope: account:everything\n      summary: List my API keys\n',
    },
    {
      rule: 'works-api/problem-responses', // getMe no longer documents its 401
      from: "          $ref: '#/components/responses/InvalidParameters'\n        '401':\n          $ref: '#/components/responses/Unauthorized'\n        '403':\n          $ref: '#/components/responses/InsufficientScope'\n        '429':\n          $ref: '#/components/responses/TooManyRequests'\n        '431':\n          $ref: '#/components/responses/HeadersTooLarge'\n        '500':\n          $ref: '#/components/responses/InternalError'\n        '503':\n          $ref: '#/components/responses/ServiceUnavailable'\n\n  /api-keys:",
      to: "          $ref: '#/components/responses/InvalidParameters'\n        '403':\n          $ref: '#/components/responses/InsufficientScope'\n        '429':\n          $ref: '#/components/responses/TooManyRequests'\n        '431':\n          $ref: '#/components/responses/HeadersTooLarge'\n        '500':\n          $ref: '#/components/responses/InternalError'\n        '503':\n          $ref: '#/components/responses/ServiceUnavailable'\n\n  /api-keys:",
    },
    {
      rule: 'works-api/problem-responses', // a 4xx that is not problem+json
      from: "          $ref: '#/components/headers/AccessControlAllowOrigin'\n      content:\n        application/problem+json:\n          schema:\n            $ref: '#/components/schemas/InsufficientScopeProblem'\n",
      to: "          $ref: '#/components/headers/AccessControlAllowOrigin'\n      content:\n        application/json:\n          schema:\n            $ref: '#/components/schemas/InsufficientScopeProblem'\n",
    },
    {
      rule: 'works-api/problem-responses', // a 4xx whose codes are not a closed set: the bare Problem schema
      from: "          schema:\n            $ref: '#/components/schemas/NotFoundProblem'\n",
      to: "          schema:\n            $ref: '#/components/schemas/Problem'\n",
    },
    {
      rule: 'works-api/no-store-responses', // the request actions' response no longer says Cache-Control
      from: "    RequestActionDone:\n      description: The request after the action (or unchanged, when the action had already produced its state).\n      headers:\n        ETag:\n          $ref: '#/components/headers/ETag'\n        X-Request-Id:\n          $ref: '#/components/headers/XRequestId'\n        Cache-Control:\n          $ref: '#/components/headers/CacheControl'\n",
      to: "    RequestActionDone:\n      description: The request after the action (or unchanged, when the action had already produced its state).\n      headers:\n        ETag:\n          $ref: '#/components/headers/ETag'\n        X-Request-Id:\n          $ref: '#/components/headers/XRequestId'\n",
    },
    { rule: 'works-api/problem-types', from: '      title: last_owner\n', to: '      title: Last owner\n' },
    {
      rule: 'works-api/problem-types', // a second schema for a code, not said to be a variant of the first
      from: '      x-variant-of: ValidationFailedProblem\n',
      to: '',
    },
    {
      rule: 'works-api/problem-types',
      from: '            code:\n              const: email_taken\n',
      to: '            code:\n              const: already_member\n',
    },
    { rule: 'works-api/schema-example', from: '      example:\n        name: Acme Research Lab\n', to: '' },
    {
      rule: 'works-api/pattern-description',
      from: "      description: |\n        An identifier: a time-ordered UUID (version 7) in lower-case hexadecimal with hyphens. Treat it as opaque\n        (compare it, never take it apart). Where you send one in a body (a key's `tenants`), it must be a lower-case\n        UUID, such as 0193a1b2-7c3d-7e4f-8a9b-0c1d2e3f4a5b, as the service wrote it.\n",
      to: '',
    },
    {
      rule: 'works-api/parameter-example',
      from: '        maxLength: 200\n        example: AQGTobJ8PX5PipsMHS4_SlvI0tH7AVTTWnXqp_5OAUaD\n    IdempotencyKey:',
      to: '        maxLength: 200\n    IdempotencyKey:',
    },
    { rule: 'works-api/bounded-values', from: '      maxLength: 254\n', to: '' },
    { rule: 'works-api/bounded-values', from: '              maxItems: 1000\n', to: '' },
    {
      rule: 'works-api/object-direction', // a request body that takes undeclared properties
      from: '    UpdateMemberBody:\n      type: object\n      additionalProperties: false\n',
      to: '    UpdateMemberBody:\n      type: object\n',
    },
    {
      rule: 'works-api/object-direction', // a response schema that would refuse a new property
      from: '    EmailDelivery:\n      type: object\n',
      to: '    EmailDelivery:\n      type: object\n      additionalProperties: false\n',
    },
    {
      rule: 'works-api/operation-security',
      from: '\n      operationId: listApiKeys\n',
      to: '\n      operationId: listApiKeys\n      security: []\n',
    },
    {
      rule: 'works-api/operation-links',
      from: "api_key_id: '$response.body#/apiKey/id'",
      to: "api_key_id: '$response.body#/apiKey/key'",
    },
    {
      rule: 'no-invalid-schema-examples',
      from: '        role: admin\n    CreateWorkBody:',
      to: '        role: superuser\n    CreateWorkBody:',
    },
    { rule: 'operation-description', from: '      description: The user the API key belongs to.\n', to: '' },
  ];

  it('reports every purpose-made violation under its rule', () => {
    const broken = mutations.reduce((text, { from, to }) => mutate(text, from, to), specText);
    const { status, output } = lint(broken);
    assert.notEqual(status, 0, 'lint must fail');
    for (const { rule } of mutations)
      assert.match(output, new RegExp(` ${rule.replace('/', '\\/')} `), `${rule} was not reported`);
  });

  it('holds the direction rule both ways: requests closed, what we send open, a schema used both ways split', () => {
    let text = mutate(
      specText,
      '    EmailDelivery:\n      type: object\n',
      '    EmailDelivery:\n      type: object\n      additionalProperties: false\n',
    );
    text = mutate(
      text,
      '    UpdateMemberBody:\n      type: object\n      additionalProperties: false\n',
      '    UpdateMemberBody:\n      type: object\n',
    );
    // A request body that reuses a response schema (Recipient) is one schema in both directions.
    text = mutate(
      text,
      "          description: Defaults to an empty string.\n        recipient:\n          type: object\n          additionalProperties: false\n          required: [email]\n          properties:\n            email:\n              $ref: '#/components/schemas/Email'\n            firstName:\n              $ref: '#/components/schemas/PersonName'\n            lastName:\n              $ref: '#/components/schemas/PersonName'\n",
      "          description: Defaults to an empty string.\n        recipient:\n          $ref: '#/components/schemas/Recipient'\n",
    );
    const { output } = lint(text);
    const reports = output.split('\n').filter((line) => line.includes('works-api/object-direction'));
    assert.equal(reports.length, 3, output);
    assert.match(output, /we send \(a response or a webhook payload\) must not forbid additional properties/);
    assert.match(output, /in a request needs `additionalProperties: false`/);
    assert.match(output, /both taken \(a request\) and sent/);
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
    return spawnSync(bin, ['api.yaml', '--output', 'schema.d.ts', '--check'], { cwd: dir, encoding: 'utf8', env })
      .status;
  }

  it('passes when the committed types are what the spec produces', () => assert.equal(check(specText, committed), 0));
  it('fails when the spec changed and the types were not regenerated', () => {
    const changed = mutate(
      specText,
      '    CreateTenantBody:\n      type: object\n',
      '    CreateTenantBody:\n      type: object\n      description: What a new tenant needs.\n',
    );
    assert.notEqual(check(changed, committed), 0);
  });
  it('fails when the generated file was edited by hand', () => {
    assert.notEqual(
      check(specText, committed.replace('export interface paths {', 'export interface paths {\n    "/extra": never;')),
      0,
    );
  });
});

describe("the client's operation table (generate-operations --check)", async () => {
  const { generate } = await import(path.join(repoRoot, 'packages', 'client', 'scripts', 'generate-operations.mjs'));
  const committed = readFileSync(path.join(repoRoot, 'packages', 'client', 'src', 'operations.ts'), 'utf8');

  it('matches the spec', () => assert.equal(generate(specText), committed));
  it('differs once an operation is added', () => {
    const spec = mutate(
      specText,
      '  /me:\n    get:\n',
      '  /me:\n    delete:\n      operationId: removeMe\n      responses: {}\n    get:\n',
    );
    assert.notEqual(generate(spec), committed);
    assert.match(generate(spec), /removeMe: \{ method: 'delete', path: '\/me', creates: false \}/);
  });
});

describe('code samples (generate-code-samples --check)', async () => {
  const { generate } = await import(path.join(openapiDir, 'scripts', 'generate-code-samples.mjs'));

  it('are what the spec produces', () => assert.equal(generate(specText), specText));
  it('change with an example, so a stale sample fails the check', () => {
    const spec = mutate(
      specText,
      '      example:\n        name: Acme Research Lab\n',
      '      example:\n        name: Acme Research Institute\n',
    );
    assert.notEqual(generate(spec), spec);
    assert.match(generate(spec), /-d '\{"name":"Acme Research Institute"\}'/);
  });
  it('are written for a new operation, and nothing else in the file changes', () => {
    const operation = [
      '  /me/preferences:',
      '    get:',
      '      tags: [Account]',
      '      operationId: getPreferences',
      '      summary: My preferences',
      "      description: The caller's preferences.",
      '      responses:',
      "        '200':",
      '          description: The preferences.',
      '',
      '  /api-keys:\n',
    ].join('\n');
    const spec = mutate(specText, '  /api-keys:\n', operation);
    const generated = generate(spec);
    assert.match(
      generated,
      /operationId: getPreferences\n {6}summary: My preferences\n {6}description: The caller's preferences.\n {6}x-codeSamples:\n/,
    );
    assert.match(generated, /unwrap\(await api\.getPreferences\(\)\);/);
    assert.equal(
      generated.replace(/\n {6}x-codeSamples:\n(?: {8,}.*\n|\n)*/g, '\n'),
      spec.replace(/\n {6}x-codeSamples:\n(?: {8,}.*\n|\n)*/g, '\n'),
    );
  });
});

// Each check is a few seconds of CPU in a child process (two YAML parses and a redocly diff of the whole spec): run
// them side by side, as the other cores are idle meanwhile (turbo runs one package's tests at a time).
describe('breaking-change check (redocly diff against the previous commit)', { concurrency: true }, () => {
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
  /** The check run in `dir`: its exit status and output (asynchronously, so that the tests below run side by side). */
  const check = (dir) =>
    new Promise((resolve) =>
      execFile(
        process.execPath,
        [script],
        { cwd: dir, encoding: 'utf8', env: { ...env, API_BASE_REF: '' } },
        (error, stdout, stderr) => resolve({ status: error ? error.code : 0, output: stdout + stderr }),
      ),
    );
  const removeMe = (text) => text.slice(0, text.indexOf('  /me:\n')) + text.slice(text.indexOf('  /api-keys:\n'));
  const addOptionalField = (text) =>
    mutate(
      text,
      "      properties:\n        name:\n          $ref: '#/components/schemas/Name'\n      example:\n        name: Acme Research\n",
      "      properties:\n        name:\n          $ref: '#/components/schemas/Name'\n        note:\n          $ref: '#/components/schemas/LongText'\n      example:\n        name: Acme Research\n",
    );

  it('passes on a first commit (nothing to compare)', async () => {
    const { dir } = repoWith(specText);
    const { status, output } = await check(dir);
    assert.equal(status, 0, output);
    assert.match(output, /nothing can break yet/);
  });
  it('passes an additive change', async () => {
    const { dir } = repoWith(specText, addOptionalField(specText));
    const { status, output } = await check(dir);
    assert.equal(status, 0, output);
  });
  it('fails when an operation is removed', async () => {
    const { dir } = repoWith(specText, removeMe(specText));
    const { status, output } = await check(dir);
    assert.equal(status, 1, output);
    assert.match(output, /Path `\/me` was removed/);
  });
  it('fails when a request body gains a required property', async () => {
    const { dir } = repoWith(
      specText,
      mutate(specText, 'required: [title, recipient]', 'required: [title, recipient, dueAt]'),
    );
    const { status, output } = await check(dir);
    assert.equal(status, 1, output);
    assert.match(output, /became required: `dueAt`/);
  });
  it('sees through the composition of problem types: a new code in a response is breaking, a removed one is not', async () => {
    // TransitionConflict's two codes (ResendConflict starts with the same two, then has a third).
    const transition =
      "              - $ref: '#/components/schemas/InvalidTransitionProblem'\n              - $ref: '#/components/schemas/WorkDiscardedProblem'\n";
    const addCode = (text) =>
      mutate(
        text,
        `${transition}          example:\n`,
        `${transition}              - $ref: '#/components/schemas/LastOwnerProblem'\n          example:\n`,
      );
    const added = repoWith(specText, addCode(specText));
    const { status, output } = await check(added.dir);
    assert.equal(status, 1, output);
    assert.match(output, /last_owner/);
    const removed = repoWith(addCode(specText), specText);
    assert.equal((await check(removed.dir)).status, 0);
  });
  it('fails when a problem type stops requiring a property', async () => {
    const { dir } = repoWith(
      specText,
      mutate(specText, 'required: [code, status, requestId]', 'required: [code, status]'),
    );
    const { status, output } = await check(dir);
    assert.equal(status, 1, output);
    assert.match(output, /requestId/);
  });
  it('passes a response schema that opens to new properties, and still fails a tighter request body', async () => {
    const opened = repoWith(
      mutate(
        specText,
        '    EmailDelivery:\n      type: object\n',
        '    EmailDelivery:\n      type: object\n      additionalProperties: false\n',
      ),
      specText,
    );
    const result = await check(opened.dir);
    assert.equal(result.status, 0, result.output);
    assert.match(result.output, /`additionalProperties: false` removed: clients ignore properties they do not know/);
    const closedInput = repoWith(
      specText,
      mutate(
        specText,
        '    ConfirmRequestBody:\n      type: object\n      additionalProperties: false\n',
        '    ConfirmRequestBody:\n      type: object\n      additionalProperties: false\n      maxProperties: 0\n',
      ),
    );
    assert.equal((await check(closedInput.dir)).status, 1);
  });
  it('passes a pattern written another way that accepts the same strings, and fails one that accepts fewer', async () => {
    const current = "        pattern: '^[\\x21-\\x7E]*$'\n";
    const withNot = mutate(specText, current, "        not:\n          pattern: '[^\\x21-\\x7E]'\n");
    const rewritten = await check(repoWith(withNot, specText).dir);
    assert.equal(rewritten.status, 0, rewritten.output);
    assert.match(rewritten.output, /a pattern written another way that accepts the same strings/);
    const tighter = await check(
      repoWith(withNot, mutate(specText, current, "        pattern: '^[\\x21-\\x7D]*$'\n")).dir,
    );
    assert.equal(tighter.status, 1, tighter.output);
  });
  it('compares with the last release tag when there is one, and says so', async () => {
    const { dir, git } = repoWith(specText);
    git('tag', 'v1.0.0');
    writeFileSync(path.join(dir, 'openapi', 'api.yaml'), removeMe(specText));
    git('commit', '--quiet', '-am', 'a break');
    writeFileSync(path.join(dir, 'openapi', 'api.yaml'), addOptionalField(removeMe(specText)));
    git('commit', '--quiet', '-am', 'an addition after it');
    // Against the previous commit this is additive; against the release it still removes /me.
    const { status, output } = await check(dir);
    assert.equal(status, 1, output);
    assert.match(output, /comparing openapi\/api\.yaml with v1\.0\.0 \(the last release tag\)/);
    assert.match(output, /Path `\/me` was removed/);
  });
  it('falls back to the previous commit without a release tag, and says so', async () => {
    const { dir } = repoWith(specText, addOptionalField(specText));
    assert.match((await check(dir)).output, /with HEAD~1 \(no release tag \(v\*\) yet: the previous commit\)/);
  });
  it('passes a breaking change once BREAKING_CHANGES_ACCEPTED gains a line in the same change', async () => {
    const { dir, git } = repoWith(specText, removeMe(specText));
    const accepted = path.join(dir, 'openapi', 'BREAKING_CHANGES_ACCEPTED');
    writeFileSync(accepted, `${readFileSync(accepted, 'utf8')}\n# a comment alone does not count\n`);
    assert.equal((await check(dir)).status, 1, 'a comment is no acceptance');
    writeFileSync(
      accepted,
      `${readFileSync(accepted, 'utf8')}2026-11-23 GET /me removed: replaced by GET /users/me.\n`,
    );
    git('commit', '--quiet', '--amend', '-a', '--no-edit');
    const { status, output } = await check(dir);
    assert.equal(status, 0, output);
    assert.match(output, /accepted as intentional/);
  });
});

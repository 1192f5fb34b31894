import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import { z } from 'zod';
import { isRealDateTime } from '../../src/domain/dates';
import { docsRoutes } from '../../src/http/docs';
import { loadSpec, resolveRef } from '../../src/http/spec';

/**
 * The served contract through an independent generator, as a partner would run it: `@hey-api/openapi-ts` 0.99 with
 * its Zod plugin, reading `GET /openapi.yaml`. Every constraint the contract states on a value (lengths, patterns
 * and their messages, formats, bounds, enums, required properties, array sizes) must be in the generated Zod, for
 * every named schema, every parameter and every success body: a constraint a generator drops without a word is
 * one partners never see (it happened with `not: { pattern }`). The object-level keywords the plugin does not emit
 * at all are listed below, each with what a partner gets instead; a new one fails this test.
 */
const execFileAsync = promisify(execFile);
type Json = Record<string, unknown>;
const { document } = loadSpec();
const components = document.components as Record<string, Record<string, Json>>;

let output: string;
let generated: Record<string, z.ZodType>;
let typesSource: string;
let clientSource: string;

beforeAll(async () => {
  const app = express().use(docsRoutes());
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.yaml`;
  output = mkdtempSync(path.join(tmpdir(), 'works-hey-api-'));
  try {
    // Not spawnSync: the generator fetches the contract from this process's server, which must go on answering.
    await execFileAsync(process.execPath, [path.join(__dirname, '../support/hey-api-generate.mjs'), url, output], {
      timeout: 120_000,
    });
  } finally {
    server.close();
  }
  // The generated module imports 'zod': this package's (the instance the test reads it with).
  const zodFile = path.join(output, 'zod.gen.ts');
  writeFileSync(zodFile, readFileSync(zodFile, 'utf8').replaceAll("from 'zod'", `from '${require.resolve('zod')}'`));
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a file generated at run time, read by jest's transform
  generated = require(zodFile) as Record<string, z.ZodType>;
  typesSource = readFileSync(path.join(output, 'types.gen.ts'), 'utf8');
  clientSource = readFileSync(path.join(output, 'client.gen.ts'), 'utf8');
}, 150_000);
afterAll(() => output && rmSync(output, { recursive: true, force: true }));

/** A spec schema with `$ref`s followed and `allOf` merged (the outer node's keywords win). */
function flat(node: unknown): Json {
  if (typeof node !== 'object' || node === null) return {};
  const schema = node as Json;
  if (typeof schema.$ref === 'string') return { ...flat(resolveRef(document, schema.$ref)), ...dropRef(schema) };
  const merged: Json = {};
  for (const member of (schema.allOf as unknown[] | undefined) ?? []) {
    const part = flat(member);
    Object.assign(merged, part, {
      properties: { ...(merged.properties as Json), ...(part.properties as Json) },
      required: [...((merged.required as string[]) ?? []), ...((part.required as string[]) ?? [])],
    });
  }
  const { allOf: _, ...own } = schema;
  return { ...merged, ...own };
}
const dropRef = ({ $ref: _, ...rest }: Json) => rest;

/** Zod's JSON Schema for a node, with `null` alternatives (nullable) set aside. */
function withoutNull(node: Json): Json {
  const alternatives = (node.anyOf ?? node.oneOf) as Json[] | undefined;
  if (alternatives) {
    const rest = alternatives.filter((alternative) => alternative.type !== 'null');
    if (rest.length === 1) return withoutNull({ ...node, anyOf: undefined, oneOf: undefined, ...rest[0] });
    return { ...node, anyOf: rest };
  }
  if (Array.isArray(node.type)) {
    const types = (node.type as string[]).filter((type) => type !== 'null');
    return { ...node, type: types.length === 1 ? types[0] : types };
  }
  return node;
}

/** Zod's JSON Schema of an intersection (`.and()`: a problem type) as one schema, properties merged. */
function merged(node: Json): Json {
  if (!Array.isArray(node.allOf)) return node;
  const parts = (node.allOf as Json[]).map(merged);
  const properties: Record<string, Json> = {};
  for (const part of parts)
    for (const [name, property] of Object.entries((part.properties as Record<string, Json>) ?? {}))
      properties[name] = { ...properties[name], ...property };
  const required = parts.flatMap((part) => (part.required as string[]) ?? []);
  return { ...Object.assign({}, ...parts), properties, required };
}

/** Keywords of a value, compared as written (a regex by its source, as JSON Schema and Zod write it). */
const VALUE_KEYWORDS = ['minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'minItems', 'maxItems', 'const'];
const STRING_FORMATS = new Set(['date-time', 'email', 'uri']);
const same = (keyword: string, want: unknown, have: unknown) =>
  keyword === 'pattern' && typeof want === 'string' && typeof have === 'string'
    ? want === have.replaceAll('\\/', '/') // a regex literal escapes its slashes
    : JSON.stringify(want) === JSON.stringify(have);

/** Every constraint of `spec` missing or different in `zod` (Zod's JSON Schema), with where. */
function missing(spec: unknown, zod: Json, at: string): string[] {
  const want = flat(spec);
  const have = merged(withoutNull(zod));
  const wantAlternatives = (want.oneOf ?? want.anyOf) as unknown[] | undefined;
  if (Array.isArray(have.anyOf) && !wantAlternatives) {
    // One operation, several success bodies (addMember: 201 member, 202 invitation): the one that fits.
    const tries = (have.anyOf as Json[]).map((alternative) => missing(spec, alternative, at));
    return tries.reduce((best, next) => (next.length < best.length ? next : best));
  }
  const problems: string[] = [];
  if (want.not !== undefined) problems.push(`${at}: not (no generator keeps it)`);
  for (const keyword of VALUE_KEYWORDS) {
    if (want[keyword] === undefined) continue;
    if (!same(keyword, want[keyword], have[keyword]))
      problems.push(`${at}: ${keyword} ${JSON.stringify(want[keyword])}, Zod has ${JSON.stringify(have[keyword])}`);
  }
  if (typeof want.format === 'string' && STRING_FORMATS.has(want.format) && have.format !== want.format)
    problems.push(`${at}: format ${want.format}, Zod has ${JSON.stringify(have.format)}`);
  if (
    (want.type === 'integer' || (Array.isArray(want.type) && want.type.includes('integer'))) &&
    have.type !== 'integer'
  )
    problems.push(`${at}: an integer, Zod has ${JSON.stringify(have.type)}`);
  if (Array.isArray(want.enum)) {
    const values = (want.enum as unknown[]).filter((value) => value !== null).sort();
    const zodValues = ((have.enum as unknown[]) ?? []).filter((value) => value !== null).sort();
    if (JSON.stringify(values) !== JSON.stringify(zodValues))
      problems.push(`${at}: enum ${JSON.stringify(values)}, Zod has ${JSON.stringify(zodValues)}`);
  }
  if (Array.isArray(want.required)) {
    const zodRequired = new Set((have.required as string[]) ?? []);
    for (const name of want.required as string[])
      if (!zodRequired.has(name)) problems.push(`${at}: ${name} is required, Zod makes it optional`);
  }
  for (const [name, property] of Object.entries((want.properties as Json) ?? {})) {
    const zodProperty = (have.properties as Record<string, Json> | undefined)?.[name];
    if (!zodProperty) problems.push(`${at}/${name}: missing in Zod`);
    else problems.push(...missing(property, zodProperty, `${at}/${name}`));
  }
  if (want.items && have.items) problems.push(...missing(want.items, have.items as Json, `${at}/items`));
  const alternatives = wantAlternatives?.filter((alternative) => flat(alternative).type !== 'null');
  if (alternatives && alternatives.length > 1) {
    const zodAlternatives = (have.anyOf ?? have.oneOf) as Json[] | undefined;
    if (zodAlternatives?.length !== alternatives.length) problems.push(`${at}: ${alternatives.length} alternatives`);
    else
      alternatives.forEach((alternative, i) =>
        problems.push(...missing(alternative, zodAlternatives[i]!, `${at}|${i}`)),
      );
  } else if (alternatives?.length === 1) problems.push(...missing(alternatives[0], have, at));
  return problems;
}

const jsonOf = (schema: z.ZodType) =>
  z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any', reused: 'inline', cycles: 'ref' }) as Json;
const zodFor = (name: string) => {
  const schema = generated[`z${name}`];
  if (!schema) throw new Error(`the generated Zod has no z${name}`);
  return schema;
};

/** Every keyword the contract's schemas use, wherever they are. */
function keywordsOf(node: unknown, into = new Set<string>(), inSchema = false): Set<string> {
  if (Array.isArray(node)) node.forEach((item) => keywordsOf(item, into, inSchema));
  else if (typeof node === 'object' && node !== null)
    for (const [key, value] of Object.entries(node)) {
      if (key === 'example' || key === 'examples' || key.startsWith('x-')) continue;
      if (inSchema) into.add(key);
      if (inSchema && ['discriminator', 'enum', 'const', 'default', 'required'].includes(key)) continue;
      const schemaChild = key === 'schema' || key === 'schemas' || key === 'items' || inSchema;
      const keyed = key === 'properties' || key === 'schemas';
      if (keyed && typeof value === 'object' && value !== null)
        for (const child of Object.values(value)) keywordsOf(child, into, true);
      else keywordsOf(value, into, schemaChild && key !== 'properties');
    }
  return into;
}

/** What this test compares, and what describes or composes rather than constrains. */
const COMPARED = new Set([
  ...VALUE_KEYWORDS,
  'format',
  'type',
  'enum',
  'required',
  'properties',
  'items',
  'oneOf',
  'anyOf',
  'allOf',
  'not',
  '$ref',
  'description',
  'title',
  'default',
  'discriminator',
  'maxProperties',
]);
/** What the Zod plugin (0.99) does not emit, and what a partner's generated Zod does instead. */
const NOT_EMITTED = {
  additionalProperties: 'z.object drops an unknown property instead of refusing it (the server refuses it, 400)',
  minProperties: 'an empty PATCH body passes (the server refuses it: `the body must set at least one property`)',
  uniqueItems: 'a repeated event type passes (the server refuses it: `must not list the same item twice`)',
};

describe('the served contract through @hey-api/openapi-ts and its Zod plugin', () => {
  it('compares every keyword the contract uses, but the three the plugin does not emit', () => {
    const used = keywordsOf({ paths: document.paths, components: document.components, webhooks: document.webhooks });
    expect([...used].filter((keyword) => !COMPARED.has(keyword)).sort()).toEqual(Object.keys(NOT_EMITTED).sort());
  });

  it('keeps every constraint of every named schema', () => {
    const problems = Object.entries(components.schemas!).flatMap(([name, schema]) =>
      missing(schema, jsonOf(zodFor(name)), name),
    );
    expect(problems).toEqual([]);
    expect(Object.keys(components.schemas!).length).toBeGreaterThan(90);
  });

  it('keeps every constraint of every parameter', () => {
    const problems = Object.entries(components.parameters!).flatMap(([name, parameter]) =>
      missing(parameter.schema, jsonOf(zodFor(name)), `parameters/${name}`),
    );
    expect(problems).toEqual([]);
  });

  it('keeps every constraint of every success body of every operation', () => {
    const problems: string[] = [];
    for (const operation of loadSpec().operations) {
      const responses = (document.paths as Record<string, Record<string, Json>>)[operation.path]![operation.method]!
        .responses as Record<string, Json>;
      const success = Object.entries(responses).find(([status]) => /^20[01]$/.test(status))?.[1];
      const schema = (flat(success).content as Record<string, Json> | undefined)?.['application/json']?.schema;
      if (!schema) continue;
      const name = `${operation.operationId[0]!.toUpperCase()}${operation.operationId.slice(1)}Response`;
      problems.push(...missing(schema, jsonOf(zodFor(name)), `${operation.operationId} response`));
    }
    expect(problems).toEqual([]);
  });

  it('says each pattern in the contract’s words (x-pattern-message), the server’s', () => {
    const name = zodFor('Name').safeParse('   ');
    expect(name.success).toBe(false);
    expect(name.error!.issues[0]!.message).toBe(String(components.schemas!.Name!['x-pattern-message']));
    const text = zodFor('LongText').safeParse('a\u0000b');
    expect(text.error!.issues[0]!.message).toBe('must not contain control characters other than line breaks and tabs');
  });

  it('accepts exactly the date-times the server accepts', () => {
    const forms = [
      '2026-11-26T10:00:00Z',
      '2026-11-26T10:00:00.123Z',
      '2026-11-26T12:00:00+02:00',
      '2026-11-26T00:30:00-05:30',
      '2026-11-26T10:00:00.1234567Z',
      '2026-11-26T10:00:00.123456+00:00',
      '2028-02-29T10:00:00Z',
      '2026-02-29T10:00:00Z',
      '2026-02-30T10:00:00Z',
      '2026-04-31T10:00:00Z',
      '2026-03-01T25:00:00Z',
      '2026-11-26T10:60:00Z',
      '2016-12-31T23:59:60Z',
      '2026-11-26t10:00:00z',
      '2026-11-26 10:00:00Z',
      '2026-11-26T10:00Z',
      '2026-11-26T10:00:00',
      '2026-11-26T10:00:00+0200',
      '2026-11-26T10:00:00+02',
      '2026-11-26',
    ];
    const zod = zodFor('DateTimeInput');
    expect(forms.map((form) => [form, zod.safeParse(form).success])).toEqual(
      forms.map((form) => [form, isRealDateTime(form)]),
    );
    expect(forms.filter(isRealDateTime)).toHaveLength(7);
  });

  it('refuses what the server refuses in a request body, except for the object-level keywords it does not emit', () => {
    // What the Zod plugin (0.99) does not emit: `additionalProperties: false` gives `z.object`, which drops an
    // unknown property instead of refusing it (the server refuses it: `unknown property "colour"`), and
    // `minProperties` is left out (the server refuses an empty PATCH: `the body must set at least one property`).
    const bodies = Object.entries(components.schemas!).filter(([name]) => name.endsWith('Body'));
    const dropsUnknown = bodies
      .filter(([name, schema]) => schema.additionalProperties === false && name !== 'EmptyBody')
      .filter(
        ([name]) => zodFor(name).safeParse({ ...(components.schemas![name]!.example as Json), colour: 'teal' }).success,
      )
      .map(([name]) => name);
    expect(dropsUnknown.sort()).toEqual(
      bodies
        .filter(([name, schema]) => schema.additionalProperties === false && name !== 'EmptyBody')
        .map(([name]) => name)
        .sort(),
    );
    expect(zodFor('EmptyBody').safeParse({ colour: 'teal' }).success).toBe(false);
    expect(
      bodies
        .filter(([, schema]) => schema.minProperties !== undefined)
        .map(([name]) => name)
        .sort(),
    ).toEqual(['UpdateWebhookEndpointBody', 'UpdateWorkBody']);
  });

  it('gives the generated client an absolute base URL, and names the Request type as the contract warns', () => {
    expect(clientSource).toMatch(/baseUrl: 'http:\/\/localhost:3000\/v1'/);
    expect(typesSource).toMatch(/^export type Request = \{/m);
    expect(String(components.schemas!.Request!.description)).toMatch(/import type \{ Request as WorksRequest \}/);
  });
});

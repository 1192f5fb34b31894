#!/usr/bin/env node
// Renders the reference (dist/index.html, served at GET /docs) from api.yaml with `redocly build-docs`, after two
// changes that are for readers only, made to a copy:
//
// - regular expressions (`pattern`) are left out where a sentence says the same: every patterned schema has a
//   description (lint rule works-api/pattern-description), and a pattern such as the one of `Name` helps nobody
//   reading the reference. The served /openapi.yaml keeps them, and the server validates with them;
// - each operation's `x-required-scope` becomes the scope of its `bearerAuth` requirement, which Redoc shows as
//   "Required scopes" under the operation's authorizations (api.yaml names it once, in the extension the server
//   reads; the security requirements stay scope-free there so that other credentials can be added beside them);
// - the API's changelog (CHANGELOG.md beside api.yaml, written by `changeset version`) becomes the last section of
//   the introduction, "Changelog".
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse, stringify } from 'yaml';

const here = path.dirname(fileURLToPath(import.meta.url));
const openapiDir = path.join(here, '..');
const redocly = path.join(
  path.dirname(createRequire(import.meta.url).resolve('@redocly/cli/package.json')),
  'bin',
  'cli.js',
);

/** The spec as the reference shows it. */
export function forReaders(spec, changelog) {
  const copy = structuredClone(spec);
  dropDescribedPatterns(copy);
  describeLinks(copy);
  showRequiredScopes(copy);
  // The server serves this reference itself (GET /docs): its URLs read best relative to the page, so the relative
  // server comes first there; generated clients take the absolute `{origin}/v1` first in api.yaml.
  copy.servers = [...copy.servers.filter(isRelative), ...copy.servers.filter((server) => !isRelative(server))];
  if (changelog !== undefined)
    copy.info.description = `${copy.info.description.trimEnd()}\n\n## Changelog\n\n${changelogSection(changelog)}\n`;
  return copy;
}

const isRelative = (server) => server.url.startsWith('/');

function dropDescribedPatterns(node, describedByParent = false) {
  if (Array.isArray(node)) return node.forEach((item) => dropDescribedPatterns(item));
  if (typeof node !== 'object' || node === null) return;
  const described = typeof node.description === 'string' || describedByParent;
  if (typeof node.pattern === 'string' && described) delete node.pattern;
  // A portable "only these characters" rule (`not: { pattern }`) is in the description's words too.
  if (described && typeof node.not?.pattern === 'string' && Object.keys(node.not).length === 1) delete node.not;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'example' || key === 'examples' || key === 'x-codeSamples') continue;
    // A parameter's description speaks for its schema.
    dropDescribedPatterns(
      value,
      key === 'schema' && typeof node.in === 'string' && typeof node.description === 'string',
    );
  }
}

/**
 * Redoc does not show a response's OpenAPI `links`: each response that has some says them in its description
 * ("Links: `getTenant` (`tenant_id` = `$response.body#/tenant/id`), ..."), so readers see how calls chain.
 */
function describeLinks(spec) {
  for (const item of Object.values(spec.paths ?? {}))
    for (const operation of Object.values(item)) {
      for (const response of Object.values(operation?.responses ?? {})) {
        if (!response?.links) continue;
        const list = Object.entries(response.links).map(([name, link]) => {
          const parameters = Object.entries(link.parameters ?? {})
            .map(([key, expression]) => `\`${key}\` = \`${expression}\``)
            .join(', ');
          return `- **${name}**: \`${link.operationId}\` (${parameters})${link.description ? `. ${link.description}` : ''}`;
        });
        response.description = `${response.description ?? ''}\n\n**Links** (what to call next with what this returns):\n\n${list.join('\n')}`;
      }
    }
}

/** Redoc shows a requirement's scopes ("Required scopes"), not extensions: the scope goes into the requirement. */
function showRequiredScopes(spec) {
  for (const item of Object.values(spec.paths ?? {}))
    for (const operation of Object.values(item)) {
      const scope = operation?.['x-required-scope'];
      if (typeof scope !== 'string') continue;
      const security = operation.security ?? spec.security ?? [];
      operation.security = security.map((requirement) =>
        Object.hasOwn(requirement, 'bearerAuth') ? { ...requirement, bearerAuth: [scope] } : requirement,
      );
    }
}

/**
 * CHANGELOG.md without its title, a release's heading in bold and its kinds of change in italics: headings would
 * each become an entry of the reference's menu.
 */
export function changelogSection(markdown) {
  const body = markdown
    .replace(/^# .*\n+/, '')
    .replace(/^## (.+)$/gm, '**$1**')
    .replace(/^#{3,6} (.+)$/gm, '*$1*');
  return body.trim() || 'No release yet.';
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const spec = parse(readFileSync(path.join(openapiDir, 'api.yaml'), 'utf8'));
  const changelogFile = path.join(openapiDir, 'CHANGELOG.md');
  const changelog = existsSync(changelogFile) ? readFileSync(changelogFile, 'utf8') : undefined;
  const dir = mkdtempSync(path.join(tmpdir(), 'works-api-docs-'));
  try {
    const input = path.join(dir, 'api.yaml');
    writeFileSync(input, stringify(forReaders(spec, changelog), { lineWidth: 0, aliasDuplicateObjects: false }));
    const output = path.join(openapiDir, 'dist', 'index.html');
    const result = spawnSync(
      process.execPath,
      [
        redocly,
        'build-docs',
        input,
        '--config',
        path.join(openapiDir, 'redocly.yaml'),
        '--output',
        output,
        '--inlineBundle',
      ],
      { stdio: 'inherit', env: { ...process.env, REDOCLY_TELEMETRY: 'off' } },
    );
    process.exitCode = result.status ?? 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

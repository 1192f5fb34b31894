import { existsSync } from 'node:fs';
import path from 'node:path';
import { consoleDir } from './console';

/**
 * The web console's build, which http/console.ts serves at /console. The start-up lines name /console only when
 * it exists, so a server started without it never points anyone at a 404.
 */
export const CONSOLE_INDEX = path.join(consoleDir, 'index.html');

export interface EntryPoints {
  api: string;
  docs: string;
  openapi: string;
  console?: string;
}

/** Where a person finds the service, from the origin it listens on (`http://127.0.0.1:3000`). */
export function entryPoints(origin: string, consoleBuilt = existsSync(CONSOLE_INDEX)): EntryPoints {
  return {
    api: `${origin}/v1`,
    docs: `${origin}/docs`,
    openapi: `${origin}/openapi.yaml`,
    ...(consoleBuilt && { console: `${origin}/console` }),
  };
}

/** The command that creates a user and their first API key, as a person would paste it into a shell. */
export function createUserCommand(api: string): string {
  const body = JSON.stringify({ email: 'you@example.com', firstName: 'Ada', lastName: 'Lovelace' });
  return `curl -X POST ${api}/admin/users -H "Authorization: Bearer $ADMIN_TOKEN" -H "Content-Type: application/json" -d '${body}'`;
}

/** The lines a person sees at start-up in a terminal: plain text, every command copyable as it is. */
export function startupBanner(points: EntryPoints, adminToken: boolean): string[] {
  return [
    '',
    `  works-api   ${points.api}`,
    `  reference   ${points.docs}`,
    `  contract    ${points.openapi}`,
    ...(points.console ? [`  console     ${points.console}`] : []),
    '',
    ...(adminToken
      ? ['  Create a user and an API key:', `  ${createUserCommand(points.api)}`]
      : ['  ADMIN_TOKEN is not set, so POST /v1/admin/users is off: restart with ADMIN_TOKEN=<16+ characters>.']),
    '',
  ];
}

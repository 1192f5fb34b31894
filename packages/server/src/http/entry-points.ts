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

/**
 * How a person gets into the console on this server, or undefined when there is no console or no way to read a
 * sign-in email here: with the dev mailbox, the sign-in link is printed in this log (and with SIGNUP=open, the
 * default there, any address gets an account).
 */
export function consoleSignInHint(
  points: EntryPoints,
  settings: { devMailbox: boolean; signUp: 'invite' | 'open' | 'closed' },
): string | undefined {
  if (!points.console || !settings.devMailbox) return undefined;
  const who = settings.signUp === 'open' ? 'with any email address (it makes your account)' : 'with your email address';
  return `Open ${points.console} and sign in ${who}: no email is sent here, the sign-in link is printed in this log (dev mailbox).`;
}

/** The lines a person sees at start-up in a terminal: plain text, every command copyable as it is. */
export function startupBanner(points: EntryPoints, adminToken: boolean, signInHint?: string): string[] {
  return [
    '',
    `  works-api   ${points.api}`,
    `  reference   ${points.docs}`,
    `  contract    ${points.openapi}`,
    ...(points.console ? [`  console     ${points.console}`] : []),
    '',
    ...(signInHint ? [`  ${signInHint}`, ''] : []),
    ...(adminToken
      ? ['  Create a user and an API key:', `  ${createUserCommand(points.api)}`]
      : ['  ADMIN_TOKEN is not set, so POST /v1/admin/users is off: restart with ADMIN_TOKEN=<16+ characters>.']),
    '',
  ];
}

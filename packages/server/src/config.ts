import path from 'node:path';
import { z } from 'zod';
import type { DatabaseTarget } from './db/client';

/** The repository root (packages/server/{src,dist}/ → ../../..). */
export const repoRoot = path.resolve(__dirname, '../../..');

const postgresUrl = z
  .string()
  .refine((value) => /^postgres(ql)?:\/\/.+/.test(value) && URL.canParse(value), {
    message: 'must be a postgres:// or postgresql:// URL',
  });

const environment = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATABASE_URL: postgresUrl.optional(),
  PGLITE_DIR: z.string().min(1).default(path.join(repoRoot, '.data/pglite')),
  ADMIN_TOKEN: z.string().min(16, 'must be at least 16 characters').optional(),
});

export interface Config {
  port: number;
  host: string;
  database: DatabaseTarget;
  adminToken?: string;
}

/** Reads and checks the environment once; an empty variable counts as unset. */
export function loadConfig(env: NodeJS.ProcessEnv): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const parsed = environment.safeParse(present);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`${issue.path.join('.')} ${issue.message}`);
  }
  const vars = parsed.data;
  return {
    port: vars.PORT,
    host: vars.HOST,
    database: vars.DATABASE_URL
      ? { kind: 'postgres', url: vars.DATABASE_URL }
      : { kind: 'pglite', dataDir: path.resolve(vars.PGLITE_DIR) },
    adminToken: vars.ADMIN_TOKEN,
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Where the data lives, without credentials, for the start-up line. */
export function describeDatabase(target: DatabaseTarget): string {
  if (target.kind === 'pglite') return `embedded PGlite in ${target.dataDir ?? 'memory'}`;
  const url = new URL(target.url);
  return `PostgreSQL at ${url.hostname}:${url.port || 5432}${url.pathname}`;
}

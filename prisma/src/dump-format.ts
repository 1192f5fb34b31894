import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

// The dump file's format (the tool and the format are described in dump.ts): the format number, the header and
// trailer lines, the types they carry, and the COPY lines and quoted names of the blocks between them.

/** The format a dump's header records; a restore reads this format only. */
export const DUMP_FORMAT = 1;
export const HEADER = '-- works-api-dump: ';
export const TRAILER = '-- works-api-dump-end: ';
export const MIGRATIONS_TABLE = '_prisma_migrations';

export interface DumpHeader {
  format: number;
  createdAt: string;
  source: 'pglite' | 'postgres';
  migrations: Array<{ name: string; checksum: string }>;
  /**
   * Webhook signing secrets and stored replays are sealed (secret-box.ts): a restore needs ENCRYPTION_KEYS
   * holding every key named here.
   */
  secrets: { sealedWith: 'aes-256-gcm'; keyIds: string[] };
}

export interface TableRows {
  table: string;
  rows: number;
}

export class DumpError extends Error {
  override name = 'DumpError';
}

export const COPY_LINE = /^COPY (?:(?:public|"public")\.)?("(?:[^"]|"")+"|\w+) \((.*)\) FROM stdin;$/;
/**
 * pg_dump's plain output around the data: comments, settings, and psql's `\restrict` guard (pg_dump 17.6, 16.10,
 * 15.14 and later); nothing that changes anything.
 */
export const IGNORED_LINE = /^(--.*|SET \w+ = .*;|SELECT pg_catalog\.set_config\(.*\);|\\(un)?restrict \w+|)$/;

export function lines(file: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
}

export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
export const unquote = (name: string): string =>
  name.startsWith('"') ? name.slice(1, -1).replaceAll('""', '"') : name;
export const splitColumns = (list: string): string[] =>
  (list.match(/"(?:[^"]|"")+"|[^,\s]+/g) ?? []).map((column) => unquote(column));

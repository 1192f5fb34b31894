import { PGlite } from '@electric-sql/pglite';
import { PGLITE_EXTENSIONS } from '@works-api/prisma';
import { Pool } from 'pg';

/** The little the baseline needs from a database: a query, and a transaction on one connection. */
export interface Sql {
  query<Row>(text: string, params?: unknown[]): Promise<Row[]>;
  transaction<T>(work: (tx: Pick<Sql, 'query'>) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** pg's Pool with the size Prisma's pg adapter uses by default (pg's own default, 10). */
export function postgresSql(url: string): Sql {
  const pool = new Pool({ connectionString: url, max: 10 });
  return {
    query: async <Row>(text: string, params?: unknown[]) => (await pool.query(text, params)).rows as Row[],
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await work({
          query: async <Row>(text: string, params?: unknown[]) => (await client.query(text, params)).rows as Row[],
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK');
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

/** An embedded PGlite in a folder, as the server opens it. */
export async function pgliteSql(dataDir: string): Promise<Sql> {
  const pglite = new PGlite(dataDir, { extensions: PGLITE_EXTENSIONS });
  await pglite.waitReady;
  return {
    query: async <Row>(text: string, params?: unknown[]) => (await pglite.query<Row>(text, params)).rows,
    transaction: (work) =>
      pglite.transaction((tx) =>
        work({ query: async <Row>(text: string, params?: unknown[]) => (await tx.query<Row>(text, params)).rows }),
      ),
    close: () => pglite.close(),
  };
}

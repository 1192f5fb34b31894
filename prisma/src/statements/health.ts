import type { Db } from '../handle';
import { sendStatement } from './send';

/** The health check's statement: resolves when the database answers. */
export async function pingDatabase(db: Db): Promise<void> {
  await sendStatement(db, 'SELECT 1', {});
}

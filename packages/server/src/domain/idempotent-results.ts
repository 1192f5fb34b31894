import {
  type Db,
  type HeldKey,
  NO_OUTCOME,
  type OutcomeStatement,
  recordResultIn,
  resultStatement,
  type Transaction,
} from '@works-api/prisma';
import { type Connection, listOfConnection, type PagedList, pagesOn } from './paging';

/**
 * What a creation under an Idempotency-Key records with its effect: the result it returns, as text. The HTTP layer
 * holds the key (`heldKey`) and renders a retry's answer from the recorded result, as it rendered the first one.
 */

/** The parts that record `result` under `heldKey` in a creation's one statement; nothing without a key. */
export const recordedWith = (
  db: Db,
  heldKey: HeldKey | undefined,
  result: unknown,
  otherwise?: { when: string; result: unknown },
): OutcomeStatement =>
  heldKey
    ? resultStatement(
        db,
        heldKey,
        resultText(result),
        otherwise && { ...otherwise, result: resultText(otherwise.result) },
      )
    : NO_OUTCOME;

/** Records `result` under `heldKey` in the creation's transaction `tx` (`KeyHoldLost` if retaken); nothing without a key. */
export const recordIn = async (db: Db, tx: Transaction, heldKey: HeldKey | undefined, result: unknown) => {
  if (heldKey) await recordResultIn(db, tx, heldKey, resultText(result));
};

/** Where a result's text keeps a Connection's mark: no schema of the contract has a property of this name. */
const PAGES_ON_PROPERTY = '@pagesOn';

/** A result as text: JSON that keeps each Connection's `pagesOn` mark, which JSON alone would drop. */
export const resultText = (result: unknown): string =>
  JSON.stringify(result, (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null) return value;
    const list = listOfConnection(value);
    return list ? { ...value, [PAGES_ON_PROPERTY]: list } : value;
  });

/** The result `resultText` wrote, its Connections marked again. */
export const resultFromText = (text: string): unknown =>
  JSON.parse(text, (_key, value: unknown) => {
    if (typeof value !== 'object' || value === null || !Object.hasOwn(value, PAGES_ON_PROPERTY)) return value;
    const { [PAGES_ON_PROPERTY]: list, ...connection } = value as Record<string, unknown>;
    return pagesOn(connection as unknown as Connection<unknown>, list as PagedList);
  });

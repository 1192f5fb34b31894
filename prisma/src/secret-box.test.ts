import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  idempotencyKeySlot,
  keyIdOf,
  newEncryptionKey,
  parseEncryptionKeys,
  pgliteKeyFile,
  SealedValueError,
  SecretBox,
  webhookSecretSlot,
} from './secret-box';
import { LEGACY, LEGACY_KEY, LEGACY_REPLAY_BODY, LEGACY_WEBHOOK_SECRET } from './legacy-sealed';

const key = () => Buffer.from(newEncryptionKey(), 'base64');

const endpointA = webhookSecretSlot('0190a1b2-0000-7000-8000-00000000000a', 'secret');

describe('SecretBox', () => {
  it('seals to text that holds neither the plaintext nor a fixed form, and opens it in its row', () => {
    const box = new SecretBox([key()]);
    const a = box.seal('whsec_secret', endpointA);
    const b = box.seal('whsec_secret', endpointA);
    expect(a).toMatch(/^sealed:v2:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    expect(a).not.toContain('secret');
    expect(a).not.toBe(b); // a new IV every time
    expect(box.open(a, endpointA)).toBe('whsec_secret');
  });

  it('rotates: the first key seals, every key opens', () => {
    const [oldKey, newKey] = [key(), key()];
    const slot = idempotencyKeySlot('0190a1b2-0000-7000-8000-0000000000a1', 'key-1');
    const sealedBefore = new SecretBox([oldKey]).seal('x', slot);
    const rotated = new SecretBox([newKey, oldKey]);
    expect(rotated.open(sealedBefore, slot)).toBe('x');
    expect(rotated.seal('y', slot)).toContain(`:${keyIdOf(newKey)}:`);
    expect(rotated.sealedWithCurrentKey(sealedBefore)).toBe(false);
  });

  it('binds a value to its table, column and row: moved anywhere else, or altered, it does not open', () => {
    const writer = new SecretBox([key()]);
    const sealed = writer.seal('x', endpointA);
    expect(() => new SecretBox([key()]).open(sealed, endpointA)).toThrow(
      `sealed with key ${writer.sealingKeyId}, which ENCRYPTION_KEYS does not hold`,
    );
    for (const elsewhere of [
      webhookSecretSlot('0190a1b2-0000-7000-8000-00000000000b', 'secret'), // another endpoint
      webhookSecretSlot(endpointA.row, 'previous_secret'), // another column of the same row
      idempotencyKeySlot('0190a1b2-0000-7000-8000-00000000000a', 'secret'), // another table
    ])
      expect(() => writer.open(sealed, elsewhere)).toThrow(SealedValueError);
    // An idempotency key's row is its scope and key together, which no split can make ambiguous.
    const replay = writer.seal('r', idempotencyKeySlot('scope', 'a:b'));
    expect(() => writer.open(replay, idempotencyKeySlot('scope:a', 'b'))).toThrow(SealedValueError);
    expect(() => writer.open(replay, idempotencyKeySlot('scope', 'a:b '))).toThrow(SealedValueError);
    // A character of the tag, away from the last one (whose low bits base64 may leave unused), always changed.
    const at = sealed.length - 5;
    const flipped = sealed.slice(0, at) + (sealed[at] === 'A' ? 'B' : 'A') + sealed.slice(at + 1);
    expect(() => writer.open(flipped, endpointA)).toThrow(SealedValueError);
  });

  it('opens the first form, written by the release before values were bound to their row, by its purpose', () => {
    // Sealed by that release's SecretBox (purpose-bound `sealed:v1:`), with this key.
    const box = new SecretBox(parseEncryptionKeys(LEGACY_KEY));
    expect(box.open(LEGACY.webhookSecret, endpointA)).toBe(LEGACY_WEBHOOK_SECRET);
    expect(JSON.parse(box.open(LEGACY.replay, idempotencyKeySlot('any', 'row')))).toEqual(LEGACY_REPLAY_BODY);
    // Its purpose still counts: a webhook secret in that form does not open as a replay.
    expect(() => box.open(LEGACY.webhookSecret, idempotencyKeySlot('any', 'row'))).toThrow(SealedValueError);
    expect(box.sealedWithCurrentKey(LEGACY.webhookSecret)).toBe(false); // re-sealed at start-up
  });

  it('passes plaintext written before sealing through', () => {
    expect(new SecretBox([key()]).open('whsec_legacy', endpointA)).toBe('whsec_legacy');
  });
});

describe('ENCRYPTION_KEYS', () => {
  it('takes comma-separated base64 keys of 32 bytes and says what is wrong without echoing them', () => {
    const [a, b] = [newEncryptionKey(), newEncryptionKey()];
    expect(parseEncryptionKeys(` ${a}, ${b} `)).toHaveLength(2);
    expect(() => parseEncryptionKeys('c2hvcnQ=')).toThrow('key 1 is not 32 bytes in base64');
    expect(() => parseEncryptionKeys(`${a},not base64!`)).toThrow('key 2 is not 32 bytes in base64');
    expect(() => parseEncryptionKeys(' , ')).toThrow('holds no key');
  });
});

describe('the embedded database key file', () => {
  it('is made on the first start beside the folder, mode 0600, and read after', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'secret-box-'));
    try {
      const dataDir = path.join(dir, 'pglite');
      const first = pgliteKeyFile(dataDir);
      expect([first.file, first.created]).toEqual([`${dataDir}.key`, true]);
      expect(statSync(first.file).mode & 0o777).toBe(0o600);
      const again = pgliteKeyFile(`${dataDir}/`);
      expect(again.created).toBe(false);
      expect(again.key.equals(first.key)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

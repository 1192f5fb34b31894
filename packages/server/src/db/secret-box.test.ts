import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { keyIdOf, newEncryptionKey, parseEncryptionKeys, pgliteKeyFile, SecretBox } from './secret-box';

const key = () => Buffer.from(newEncryptionKey(), 'base64');

describe('SecretBox', () => {
  it('seals to text that holds neither the plaintext nor a fixed form, and opens it', () => {
    const box = new SecretBox([key()]);
    const a = box.seal('whsec_secret', 'webhook-secret');
    const b = box.seal('whsec_secret', 'webhook-secret');
    expect(a).toMatch(/^sealed:v1:[0-9a-f]{8}:[A-Za-z0-9_-]+$/);
    expect(a).not.toContain('secret');
    expect(a).not.toBe(b); // a new IV every time
    expect(box.open(a, 'webhook-secret')).toBe('whsec_secret');
  });

  it('rotates: the first key seals, every key opens', () => {
    const [oldKey, newKey] = [key(), key()];
    const sealedBefore = new SecretBox([oldKey]).seal('x', 'idempotent-response');
    const rotated = new SecretBox([newKey, oldKey]);
    expect(rotated.open(sealedBefore, 'idempotent-response')).toBe('x');
    expect(rotated.seal('y', 'idempotent-response')).toContain(`:${keyIdOf(newKey)}:`);
    expect(rotated.sealedWithCurrentKey(sealedBefore)).toBe(false);
  });

  it('names the key it lacks, and refuses a value moved to another purpose or altered', () => {
    const writer = new SecretBox([key()]);
    const sealed = writer.seal('x', 'webhook-secret');
    expect(() => new SecretBox([key()]).open(sealed, 'webhook-secret')).toThrow(
      `sealed with key ${writer.sealingKeyId}, which ENCRYPTION_KEYS does not hold`,
    );
    expect(() => writer.open(sealed, 'idempotent-response')).toThrow();
    const flipped = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'B' : 'A') + sealed.slice(-1);
    expect(() => writer.open(flipped, 'webhook-secret')).toThrow();
  });

  it('passes plaintext written before sealing through', () => {
    expect(new SecretBox([key()]).open('whsec_legacy', 'webhook-secret')).toBe('whsec_legacy');
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

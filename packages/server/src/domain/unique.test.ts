import { createWithUniqueSlug, isUniqueViolation } from './unique';

const uniqueViolation = () => Object.assign(new Error('Unique constraint failed'), { code: 'P2002' });

/** A table with a unique slug column, as the database enforces it, and its slug counters. */
function table(initial: string[], counters: Record<string, number> = {}) {
  const slugs = new Set(initial);
  const bumps: string[] = [];
  return {
    slugs,
    bumps,
    nextNumber: async (base: string) => {
      bumps.push(base);
      counters[base] = (counters[base] ?? 1) + 1;
      return counters[base];
    },
    create: async (slug: string) => {
      // As against the database: the insert comes a moment later than the caller's decision.
      await new Promise((resolve) => setImmediate(resolve));
      if (slugs.has(slug)) throw uniqueViolation();
      slugs.add(slug);
      return slug;
    },
  };
}

describe('createWithUniqueSlug', () => {
  it('creates under the base slug without touching the counter when it is free', async () => {
    const t = table(['acme-research-2']);
    expect(await createWithUniqueSlug('Acme Research', 'tenant', t.nextNumber, t.create)).toBe('acme-research');
    expect(t.bumps).toEqual([]);
  });

  it('takes the next number from the counter after a collision, without reading the taken slugs', async () => {
    const t = table(['acme', 'acme-2', 'acme-3'], { acme: 3 });
    expect(await createWithUniqueSlug('ACME', 'tenant', t.nextNumber, t.create)).toBe('acme-4');
    expect(t.bumps).toEqual(['acme']);
  });

  it('moves on to the next number when a numbered slug is taken after all', async () => {
    const t = table(['acme', 'acme-2', 'acme-3']);
    expect(await createWithUniqueSlug('Acme', 'tenant', t.nextNumber, t.create)).toBe('acme-4');
    expect(t.bumps).toEqual(['acme', 'acme', 'acme']);
  });

  it('passes on errors other than a unique violation', async () => {
    const failure = new Error('connection lost');
    await expect(
      createWithUniqueSlug(
        'Acme',
        'tenant',
        async () => 2,
        async () => Promise.reject(failure),
      ),
    ).rejects.toBe(failure);
  });

  it('gives up after ten collisions in a row', async () => {
    let attempts = 0;
    const create = async () => {
      attempts++;
      throw uniqueViolation();
    };
    await expect(createWithUniqueSlug('Acme', 'tenant', async () => 2, create)).rejects.toMatchObject({
      code: 'P2002',
    });
    expect(attempts).toBe(10);
  });

  it('gets 100 concurrent creations of one name all created, numbered without gaps, each at its second attempt at most', async () => {
    const t = table([]);
    const created = await Promise.all(
      Array.from({ length: 100 }, () => createWithUniqueSlug('Acme', 'tenant', t.nextNumber, t.create)),
    );
    expect(created.sort()).toEqual(['acme', ...Array.from({ length: 99 }, (_, i) => `acme-${i + 2}`)].sort());
    expect(t.bumps).toHaveLength(99);
  });
});

describe('isUniqueViolation', () => {
  it('knows Prisma P2002, the adapter error inside a batch, and the driver error of a plain statement', () => {
    expect(isUniqueViolation({ code: 'P2002' })).toBe(true);
    expect(isUniqueViolation({ cause: { kind: 'UniqueConstraintViolation' } })).toBe(true);
    expect(isUniqueViolation({ cause: { originalCode: '23505' } })).toBe(true);
    expect(isUniqueViolation(Object.assign(new Error('duplicate key value'), { code: '23505' }))).toBe(true);
    expect(isUniqueViolation(Object.assign(new Error('not null'), { code: '23502' }))).toBe(false);
    expect(isUniqueViolation(new Error('other'))).toBe(false);
  });
});

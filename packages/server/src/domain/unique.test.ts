import { createWithUniqueSlug, isUniqueViolation } from './unique';

const uniqueViolation = () => Object.assign(new Error('Unique constraint failed'), { code: 'P2002' });

/** A table with a unique slug column, as the database enforces it. */
function table(initial: string[]) {
  const slugs = new Set(initial);
  const lookups: string[] = [];
  return {
    slugs,
    lookups,
    taken: async (prefix: string) => {
      lookups.push(prefix);
      return [...slugs].filter((slug) => slug.startsWith(prefix));
    },
    create: async (slug: string) => {
      if (slugs.has(slug)) throw uniqueViolation();
      slugs.add(slug);
      return slug;
    },
  };
}

describe('createWithUniqueSlug', () => {
  it('creates under the base slug without reading the taken ones when it is free', async () => {
    const t = table(['acme-research-2']);
    expect(await createWithUniqueSlug('Acme Research', 'tenant', t.taken, t.create)).toBe('acme-research');
    expect(t.lookups).toEqual([]);
  });

  it('reads the taken slugs after a collision and takes the next free suffix', async () => {
    const t = table(['acme', 'acme-2', 'acme-4']);
    expect(await createWithUniqueSlug('ACME', 'tenant', t.taken, t.create)).toBe('acme-3');
    expect(t.lookups).toEqual(['acme']);
  });

  it('passes on errors other than a unique violation', async () => {
    const failure = new Error('connection lost');
    await expect(
      createWithUniqueSlug(
        'Acme',
        'tenant',
        async () => [],
        async () => Promise.reject(failure),
      ),
    ).rejects.toBe(failure);
  });

  it('gives up after twenty collisions in a row', async () => {
    let attempts = 0;
    const create = async () => {
      attempts++;
      throw uniqueViolation();
    };
    await expect(createWithUniqueSlug('Acme', 'tenant', async () => [], create)).rejects.toMatchObject({
      code: 'P2002',
    });
    expect(attempts).toBe(20);
  });

  it('numbers eight creations of one name at once without gaps', async () => {
    const t = table([]);
    const created = await Promise.all(
      Array.from({ length: 8 }, () => createWithUniqueSlug('Acme', 'tenant', t.taken, t.create)),
    );
    expect(created.sort()).toEqual(['acme', 'acme-2', 'acme-3', 'acme-4', 'acme-5', 'acme-6', 'acme-7', 'acme-8']);
  });

  it('gets 30 concurrent creations of one name all created, under 30 different slugs', async () => {
    const t = table([]);
    // Each creation reads the taken slugs and then inserts, as against the database: all 30 interleave.
    const created = await Promise.all(
      Array.from({ length: 30 }, () => createWithUniqueSlug('Acme', 'tenant', t.taken, t.create)),
    );
    expect(new Set(created).size).toBe(30);
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

import { HEAP_GROWING_PERCENT, heapGrowingFlag } from './heap-growth';

describe('heap growth', () => {
  it('caps the old generation at 1.5 times what the last full GC kept', () => {
    expect(heapGrowingFlag([])).toBe(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`);
    expect(heapGrowingFlag(['--max-semi-space-size=4'], '--enable-source-maps')).toBe('--heap-growing-percent=50');
  });

  it("leaves the operator's own setting alone, as a node flag or in NODE_OPTIONS, in either spelling", () => {
    expect(heapGrowingFlag(['--heap-growing-percent=100'])).toBeUndefined();
    expect(heapGrowingFlag([], '--max-semi-space-size=4 --heap_growing_percent=30')).toBeUndefined();
  });
});

import { workerCount } from './cluster';

describe('WEB_CONCURRENCY', () => {
  it.each([
    [undefined, 1],
    ['', 1],
    ['1', 1],
    ['2', 2],
    [' 4 ', 4],
    ['64', 64],
  ])('%j asks for %d worker(s)', (value, expected) => {
    expect(workerCount(value)).toBe(expected);
  });

  it.each(['0', '65', '-1', '2.5', 'two', '1e1'])('refuses %j', (value) => {
    expect(workerCount(value)).toBeUndefined();
  });
});

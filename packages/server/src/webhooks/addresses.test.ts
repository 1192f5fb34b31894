import { isPublicAddress, resolveDeliveryAddress, urlProblem } from './addresses';

describe('isPublicAddress', () => {
  it.each([
    '0.0.0.0',
    '10.1.2.3',
    '100.64.0.1',
    '127.0.0.1',
    '127.255.255.254',
    '169.254.169.254',
    '172.16.0.1',
    '172.31.255.255',
    '192.0.0.8',
    '192.0.2.1',
    '192.168.1.1',
    '198.18.0.1',
    '198.51.100.7',
    '203.0.113.9',
    '224.0.0.1',
    '239.1.1.1',
    '240.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'fe80::1%eth0',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    'fec0::1',
    '2001:db8::1',
    '2001::1',
    '100::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    '64:ff9b::a00:1',
    '2002:7f00:1::1',
    '2002:c0a8:101::1',
    '64:ff9b:1::7f00:1', // NAT64, local-use prefix (RFC 8215), carrying 127.0.0.1
    '64:ff9b:1::a9fe:a9fe', // … carrying 169.254.169.254
    '64:ff9b:1:7f00:1::', // the IPv4 address at the /48 position
    '64:ff9b:1:ffff:ffff:ffff:ffff:ffff',
    '64:ff9b:1::808:808', // the local-use prefix is refused whole: where it leads is the local network's choice
    '::ffff:0:7f00:1', // SIIT's IPv4-translated form (::ffff:0:0:0/96), carrying 127.0.0.1
    '::ffff:0:808:808', // … refused whole, whatever it carries
    '3fff::1', // documentation (RFC 9637)
    '3fff:fff:ffff::1',
    '5f00::1', // segment routing SIDs (RFC 9602)
    '5f00:ffff::1',
    '2001:2::1', // benchmarking
    '2001:0:4136:e378:8000:63bf:3fff:fdd2', // Teredo
    '2001:20::1', // ORCHIDv2
    '2620:4f:8000::1', // AS112
    '::8.8.8.8', // IPv4-compatible (deprecated): outside 2000::/3
    '::808:808',
    '4000::1', // unallocated: outside 2000::/3
    '192.31.196.1', // AS112
    '192.175.48.1',
    '192.52.193.1', // AMT
  ])('refuses %s', (address) => expect(isPublicAddress(address)).toBe(false));

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.216.34',
    '172.32.0.1',
    '100.128.0.1',
    '2606:4700:4700::1111',
    '2a00:1450:4007::1',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:808:808::1',
    '2001:4860:4860::8888',
    '3ffe::1', // just below 3fff::/20
    '3fff:1000::1', // just above it
  ])('allows %s', (address) => expect(isPublicAddress(address)).toBe(true));

  it('refuses what is not an address', () => expect(isPublicAddress('example.com')).toBe(false));
});

describe('urlProblem', () => {
  it('wants https, no credentials, and no private literal or localhost', () => {
    expect(urlProblem('https://hooks.example.com/x', false)).toBeNull();
    expect(urlProblem('http://hooks.example.com/x', false)).toBe('must be an https URL');
    expect(urlProblem('ftp://hooks.example.com/x', true)).toBe('must be an https URL');
    expect(urlProblem('https://user:pw@hooks.example.com/', false)).toBe('must not contain credentials');
    expect(urlProblem('https://127.0.0.1/x', false)).toBe('must point to a public address');
    expect(urlProblem('https://[::ffff:10.0.0.1]/x', false)).toBe('must point to a public address');
    expect(urlProblem('https://localhost:8443/x', false)).toBe(
      'must have a host name that resolves to public addresses only',
    );
    expect(urlProblem('not a url', false)).toMatch(/^must be an absolute URL/);
  });

  it('wants port 443: any other port would make deliveries a port scanner', () => {
    expect(urlProblem('https://hooks.example.com:443/x', false)).toBeNull();
    expect(urlProblem('https://hooks.example.com:8443/x', false)).toBe('must use port 443');
    expect(urlProblem('https://8.8.8.8:22/x', false)).toBe('must use port 443');
  });

  it('allows http and private addresses when WEBHOOK_ALLOW_PRIVATE_URLS is on', () => {
    expect(urlProblem('http://127.0.0.1:3300/hook', true)).toBeNull();
    expect(urlProblem('https://[::1]/x', true)).toBeNull();
    expect(urlProblem('https://127.0.0.1:8443/x', true)).toBeNull();
  });
});

describe('resolveDeliveryAddress', () => {
  const lookup = (answers: Record<string, string[]>) => async (host: string) =>
    (answers[host] ?? []).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));

  it('returns the address it checked, to connect to exactly that one', async () => {
    const url = new URL('https://hooks.example.com/x');
    await expect(
      resolveDeliveryAddress(url, false, lookup({ 'hooks.example.com': ['93.184.216.34'] })),
    ).resolves.toEqual({
      address: '93.184.216.34',
      family: 4,
    });
  });

  it('refuses a host when any of its addresses is private (a rebinding answer mixes them)', async () => {
    const url = new URL('https://rebind.example.com/x');
    const refusal = resolveDeliveryAddress(
      url,
      false,
      lookup({ 'rebind.example.com': ['93.184.216.34', '10.20.30.40'] }),
    ).catch((error: unknown) => (error as Error).message);
    // Which private address it was stays unsaid, and so does whether the name exists: one message for a private
    // answer, an empty one and a failed lookup, or the messages would map an internal network's names.
    await expect(refusal).resolves.toBe('the host name does not resolve to public addresses only');
    await expect(resolveDeliveryAddress(new URL('https://[::1]/'), false, lookup({}))).rejects.toThrow(
      '::1 is not a public address',
    );
    await expect(resolveDeliveryAddress(new URL('https://nowhere.example/'), false, lookup({}))).rejects.toThrow(
      /^the host name does not resolve to public addresses only$/,
    );
    const failing = async () => {
      throw Object.assign(new Error('queryA ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
    };
    await expect(resolveDeliveryAddress(new URL('https://nowhere.example/'), false, failing)).rejects.toThrow(
      /^the host name does not resolve to public addresses only$/,
    );
    // With private addresses allowed (local development) the resolver's own words are kept.
    await expect(resolveDeliveryAddress(new URL('http://nowhere.example/'), true, failing)).rejects.toThrow(
      'queryA ENOTFOUND nowhere.example',
    );
    await expect(resolveDeliveryAddress(new URL('http://nowhere.example/'), true, lookup({}))).rejects.toThrow(
      'nowhere.example did not resolve',
    );
  });

  it('refuses a port other than 443 (endpoints stored before the rule)', async () => {
    const url = new URL('https://hooks.example.com:25/x');
    await expect(
      resolveDeliveryAddress(url, false, lookup({ 'hooks.example.com': ['93.184.216.34'] })),
    ).rejects.toThrow('port 25 is not 443');
  });

  it('lets private addresses through when allowed', async () => {
    await expect(resolveDeliveryAddress(new URL('http://127.0.0.1:3300/'), true, lookup({}))).resolves.toEqual({
      address: '127.0.0.1',
      family: 4,
    });
  });
});

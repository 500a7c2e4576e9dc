// Issue 14 item 2: Host and request-targets are parsed into validated parts (RFC 9110 §7.2, RFC 9112
// §3.2, RFC 3986 §3.2.2), and what is accepted can never spell another key.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { parseAuthority, formatAuthority } from '../../src/http/authority.js';
import { parseAbsoluteUrl, parseRequestTarget } from '../../src/http/request-target.js';
import { primaryKey } from '../../src/cache/policy/cache-key.js';
import { CIDR_PATTERN } from '../../src/config/address.js';
import { parseCidr, TrustedProxies } from '../../src/edge/trusted-proxies.js';

describe('Host (RFC 9110 §7.2): reg-name or IP literal with an optional port, nothing else', () => {
  const accepted: [string, string, number | undefined][] = [
    ['shop.test', 'shop.test', undefined],
    ['SHOP.Test:8080', 'shop.test', 8080],
    ['shop.test:', 'shop.test', undefined],
    ['127.0.0.1:80', '127.0.0.1', 80],
    ['[::1]', '[::1]', undefined],
    ['[::1]:', '[::1]', undefined],
    ['[0:0:0:0:0:0:0:1]:443', '[::1]', 443],
    ['[::ffff:1.2.3.4]', '[::ffff:102:304]', undefined],
    ['internal_name', 'internal_name', undefined],
    ['a:65535', 'a', 65535],
  ];
  for (const [text, host, port] of accepted) {
    test(`accepts ${JSON.stringify(text)}`, () => assert.deepEqual(parseAuthority(text), { host, port }));
  }
  for (const text of [
    '',
    'shop.test/static',
    'shop.test%2fstatic',
    'shop.test?x',
    'shop.test#x',
    'user@shop.test',
    'a b',
    '[',
    '[::1',
    '[::1]x',
    '[fe80::1%25eth0]',
    '[v1.abc]',
    '[1.2.3.4]',
    'a:99999',
    'a:0',
    'a:-1',
    'a:1:2',
    ':80',
    'a,b',
    "a'b",
    'caf\u00e9.test',
    'x'.repeat(254),
  ]) {
    test(`refuses ${JSON.stringify(text.length > 40 ? `${text.slice(0, 20)}…` : text)}`, () => assert.equal(parseAuthority(text), undefined));
  }

  test('property: an accepted authority formats back to text that parses to itself, with no character a path or query could hide behind', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary-ascii', maxLength: 30 }), (text) => {
        const parsed = parseAuthority(text);
        if (parsed === undefined) return;
        const written = formatAuthority(parsed, 'http');
        assert.doesNotMatch(written, /[/?#@\s%\\]/);
        assert.deepEqual(parseAuthority(written), { host: parsed.host, port: parsed.port === 80 ? undefined : parsed.port });
      }),
      { numRuns: 3000 },
    );
  });
});

describe('request-target (RFC 9112 §3.2)', () => {
  test('origin-form is kept byte for byte, split at the query', () => {
    assert.deepEqual(parseRequestTarget('/a/./b?x=<1>&y={2}'), {
      form: 'origin',
      scheme: undefined,
      authority: undefined,
      pathAndQuery: '/a/./b?x=<1>&y={2}',
      pathEnd: 6,
    });
    assert.equal(parseRequestTarget('//a:99999')?.pathAndQuery, '//a:99999', 'a path with an empty first segment is a path');
  });
  test('absolute-form gives scheme, authority and an origin-form path', () => {
    assert.deepEqual(parseRequestTarget('HTTP://Shop.Test:8080?q'), {
      form: 'absolute',
      scheme: 'http',
      authority: { host: 'shop.test', port: 8080 },
      pathAndQuery: '/?q',
      pathEnd: 1,
    });
  });
  for (const target of ['', '*', 'shop.test:443', 'ftp://a/b', 'http://', 'http://a@b/c', '/a#frag', '/a b', '/\u00e9', 'http://a/b#c']) {
    test(`refuses ${JSON.stringify(target)}`, () => assert.equal(parseRequestTarget(target), undefined));
  }

  test('property: distinct (authority, target) pairs that parse give distinct keys, and the key parses back to them', () => {
    const hostChar = fc.constantFrom(...'abAB09.-_/:%?#@[]'.split(''));
    const pathChar = fc.constantFrom(...'ab/.%?#{}<>"&=~ '.split(''));
    fc.assert(
      fc.property(fc.string({ unit: hostChar, maxLength: 12 }), fc.string({ unit: pathChar, maxLength: 12 }), (hostText, pathText) => {
        const authority = parseAuthority(hostText);
        const target = parseRequestTarget(`/${pathText}`);
        if (authority === undefined || target === undefined) return;
        const key = primaryKey({ scheme: 'http', authority, pathAndQuery: target.pathAndQuery });
        const back = parseAbsoluteUrl(key);
        assert.ok(back, key);
        assert.equal(back.pathAndQuery, target.pathAndQuery);
        assert.equal(formatAuthority(back.authority, 'http'), formatAuthority(authority, 'http'));
      }),
      { numRuns: 3000 },
    );
  });
});

describe('trusted_proxies addresses', () => {
  test('property: the config pattern accepts exactly the IP addresses Node accepts', () => {
    fc.assert(
      fc.property(fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended(), fc.string({ maxLength: 20 })), (text) => {
        assert.equal(CIDR_PATTERN.test(text), isIP(text) !== 0 && !text.includes('%'), text);
      }),
      { numRuns: 3000 },
    );
  });
  test('prefixes are bounded by the family', () => {
    for (const ok of ['10.0.0.0/8', '0.0.0.0/0', '::/0', 'fd00::/8', '2001:db8::/128']) assert.ok(CIDR_PATTERN.test(ok) && parseCidr(ok), ok);
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10.0.0.0/-1']) assert.ok(!CIDR_PATTERN.test(bad) && !parseCidr(bad), bad);
  });
  test('a network trusts its members, IPv4-mapped IPv6 included, and nothing else', () => {
    const trusted = new TrustedProxies(['10.0.0.0/8', '::1']);
    assert.ok(trusted.trusts('10.1.2.3'));
    assert.ok(trusted.trusts('::ffff:10.1.2.3'));
    assert.ok(trusted.trusts('::1'));
    assert.ok(!trusted.trusts('11.0.0.1'));
    assert.ok(!trusted.trusts('127.0.0.1'));
    assert.ok(!new TrustedProxies([]).trusts('10.1.2.3'));
  });
});

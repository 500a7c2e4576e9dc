// Spec §6.2: which CDN purge each invalidation becomes, the metacharacter rule, and the cases the spec
// leaves open (docs/decisions.md, "CDN propagation").
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { literalOf } from '../../src/cdn/regex-literal.js';
import { mapInvalidation, type CdnMapping } from '../../src/cdn/purge-mapping.js';
import type { BanSpec } from '../../src/invalidation/invalidator.js';

describe('the metacharacter rule', () => {
  const literals: [string, string][] = [
    ['www.example.com', 'www.example.com'],
    ['www\\.example\\.com', 'www.example.com'],
    ['^www\\.example\\.com$', 'www.example.com'],
    ['/products/', '/products/'],
    ['^/static/app.js', '/static/app.js'],
    ['/a\\-b\\/c', '/a-b/c'],
    ['/price\\$', '/price$'],
    ['/price\\\\$', '/price\\'],
  ];
  for (const [pattern, literal] of literals) {
    test(`${pattern} is the literal ${literal}`, () => assert.equal(literalOf(pattern), literal));
  }
  const regexes = ['.*', '/products/.*', '[0-9]+', '/a|/b', 'a?', '/item/\\d', '(x)', 'a{2}', '/a^b', '/a$b', '\\bword', '^', '^$', '/end\\'];
  for (const pattern of regexes) {
    test(`${pattern} is a regex`, () => assert.equal(literalOf(pattern), undefined));
  }
});

describe('the mapping of invalidations to CDN purges', () => {
  const ban = (spec: BanSpec): CdnMapping => mapInvalidation({ type: 'ban', spec });
  const target = (operation: string, kind: string, value: string): CdnMapping => ({ targets: [{ operation, kind, value }] }) as CdnMapping;

  test('a purge purges its URL, a batch its URLs, a refresh its URL (the CDN has no "stale")', () => {
    assert.deepEqual(mapInvalidation({ type: 'purge', urls: ['https://a.example/x'] }), target('purge', 'files', 'https://a.example/x'));
    assert.deepEqual(mapInvalidation({ type: 'purge', urls: ['http://a.example/1', 'http://a.example/2'] }), {
      targets: [
        { operation: 'purge', kind: 'files', value: 'http://a.example/1' },
        { operation: 'purge', kind: 'files', value: 'http://a.example/2' },
      ],
    });
    assert.deepEqual(mapInvalidation({ type: 'refresh', url: 'https://a.example/x' }), target('refresh', 'files', 'https://a.example/x'));
  });

  test('a surrogate key purges its tag, whatever regexes come with it', () => {
    assert.deepEqual(ban({ surrogate_key: ' product-1 ' }), target('ban', 'tags', 'product-1'));
    assert.deepEqual(ban({ surrogate_key: 'p', host_regex: '.*', path_regex: '[0-9]+' }), target('ban', 'tags', 'p'));
  });

  test('a literal host purges the host name (lower case, without a port)', () => {
    assert.deepEqual(ban({ host_regex: 'Shop.Example.com' }), target('ban', 'hosts', 'shop.example.com'));
    assert.deepEqual(ban({ host_regex: '^shop\\.example\\.com:8443$' }), target('ban', 'hosts', 'shop.example.com'));
  });

  test('a literal host with a literal path purges the prefix host/path', () => {
    assert.deepEqual(ban({ host_regex: 'shop.example.com', path_regex: '^/products/' }), target('ban', 'prefixes', 'shop.example.com/products/'));
  });

  test('a literal host with a path regex (or a path that is no prefix) purges the whole host: a superset of the ban', () => {
    assert.deepEqual(ban({ host_regex: 'shop.example.com', path_regex: '\\.css$' }), target('ban', 'hosts', 'shop.example.com'));
    assert.deepEqual(ban({ host_regex: 'shop.example.com', path_regex: 'products' }), target('ban', 'hosts', 'shop.example.com'));
  });

  test('what nothing short of the whole zone covers is skipped, with its reason', () => {
    assert.deepEqual(ban({ host_regex: '.*\\.example\\.com' }), { skipped: 'regex_metacharacters' });
    assert.deepEqual(ban({ path_regex: '/products/[0-9]+' }), { skipped: 'regex_metacharacters' });
    assert.deepEqual(ban({ host_regex: 'a|b', path_regex: '/products/' }), { skipped: 'regex_metacharacters' });
    assert.deepEqual(ban({ path_regex: '/products/' }), { skipped: 'path_without_host' });
  });

  test('empty fields do not count', () => {
    assert.deepEqual(ban({ host_regex: 'shop.example.com', path_regex: '', surrogate_key: '' }), target('ban', 'hosts', 'shop.example.com'));
  });
});

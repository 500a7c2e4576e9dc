// The dashboard forms' rules (spec §1, §7), as POST /dashboard/api/validate applies them: URLs begin
// with http:// or https:// and name a host, regexes are valid RE2, a ban fills at least one field.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { validateForm, type FormValidationRequest } from '../../src/admin/dashboard/form-validation.js';

function problems(form: FormValidationRequest): string[] {
  return validateForm(form).problems.map((problem) => `${problem.field}: ${problem.message}`);
}

describe('dashboard form validation', () => {
  test('a URL must begin with http:// or https:// and include a host', () => {
    for (const operation of ['purge', 'refresh', 'inspect'] as const) {
      assert.deepEqual(problems({ operation, url: 'https://shop.example/a?b=1' }), []);
      assert.deepEqual(problems({ operation, url: 'HTTP://shop.example' }), []);
      assert.deepEqual(problems({ operation, url: '' }), ['url: Enter a URL.']);
      assert.deepEqual(problems({ operation, url: '   ' }), ['url: Enter a URL.']);
      for (const url of ['shop.example/a', 'ftp://shop.example/a', '/a', 'http:shop.example', ' https://shop.example/a']) {
        assert.deepEqual(problems({ operation, url }), ['url: The URL must begin with http:// or https://.'], url);
      }
      for (const url of ['http://', 'https:///a', 'http://?q', 'http://[::1']) {
        assert.match(problems({ operation, url })[0] ?? '', /^url: The URL must include a host/, url);
      }
    }
  });

  test('a batch names each bad line, and holds 1 to 1000 URLs', () => {
    assert.deepEqual(problems({ operation: 'purge_batch', urls: ['https://a.example/', 'http://b.example/x'] }), []);
    assert.deepEqual(problems({ operation: 'purge_batch', urls: ['https://a.example/', 'b.example', 'http://'] }), [
      'urls[1]: Line 2: The URL must begin with http:// or https://.',
      'urls[2]: Line 3: The URL must include a host after http:// or https://, e.g. https://shop.example/page.',
    ]);
    assert.deepEqual(problems({ operation: 'purge_batch', urls: [] }), ['urls: Enter at least one URL, one per line.']);
    const many = Array.from({ length: 1001 }, (_, i) => `https://a.example/${i}`);
    assert.deepEqual(problems({ operation: 'purge_batch', urls: many }), ['urls: A batch holds at most 1000 URLs; this one has 1001.']);
  });

  test('a ban needs one non-empty field; whitespace is not a surrogate key', () => {
    assert.deepEqual(problems({ operation: 'ban', surrogate_key: 'product-7' }), []);
    const empty = ['form: Fill in at least one field: host regex, path regex or surrogate key.'];
    assert.deepEqual(problems({ operation: 'ban' }), empty);
    assert.deepEqual(problems({ operation: 'ban', host_regex: '', path_regex: '', surrogate_key: '  ' }), empty);
  });

  test('regexes are checked by RE2: what RE2 refuses (including lookahead) is named per field', () => {
    assert.deepEqual(problems({ operation: 'ban', host_regex: '^shop\\.example$', path_regex: '^/img/[0-9]+' }), []);
    const both = problems({ operation: 'ban', host_regex: '(', path_regex: 'a(?=b)' });
    assert.equal(both.length, 2);
    assert.match(both[0] ?? '', /^host_regex: host_regex is not a valid RE2 expression: missing \)/);
    assert.match(both[1] ?? '', /^path_regex: path_regex is not a valid RE2 expression/);
    // A backreference is valid in JavaScript but not in RE2: the server's engine decides.
    assert.match(problems({ operation: 'ban', path_regex: '(a)\\1' })[0] ?? '', /^path_regex: /);
  });
});

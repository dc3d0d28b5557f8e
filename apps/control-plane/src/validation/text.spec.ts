import { describe, expect, it } from 'vitest';
import { badStrings, invalidUtf8Fields, textProblem } from './text';
import { textErrorsOf } from './text-boundary.interceptor';

describe('textProblem', () => {
  it('finds NUL and lone surrogates, and lets any other text through', () => {
    expect(textProblem('a\u0000b')).toMatch(/NUL/);
    expect(textProblem('\ud800')).toMatch(/lone surrogate/);
    expect(textProblem('x\udc00')).toMatch(/lone surrogate/);
    for (const fine of ['', 'plain', 'ключ', '😀 pair', '\ufffd', 'tab\tnewline\n']) expect(textProblem(fine), fine).toBeUndefined();
  });
});

describe('badStrings', () => {
  it('names each bad string as body validation names fields, keys by their parent', () => {
    const value = { name: 'ok', quotas: { label: 'a\u0000' }, rules: [{ ruleId: 'r1' }, { ruleId: '\ud800' }], ['k\u0000']: 1 };
    expect(badStrings(value, 'body').map((e) => `${e.name}: ${e.reason.slice(0, 12)}`)).toEqual([
      'quotas.label: must not con',
      'rules[1].ruleId: is not valid',
      '(root): has a field ',
    ]);
    expect(badStrings('a\u0000', 'query')).toEqual([{ in: 'query', name: '(root)', reason: expect.stringMatching(/NUL/) }]);
  });
});

describe('invalidUtf8Fields', () => {
  it('names the field whose bytes were not UTF-8', () => {
    const body = Buffer.concat([Buffer.from('{"name":"a'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('","ok":"b"}')]);
    expect(invalidUtf8Fields(body)).toEqual([{ in: 'body', name: 'name', reason: expect.stringMatching(/not valid UTF-8/) }]);
  });
});

describe('textErrorsOf', () => {
  it('checks path parameters, every query parameter strictly decoded, raw bytes and the body', () => {
    expect(textErrorsOf({ url: '/v1/x/a%00?limit=1&cursor=%FF&n=a%00&%C3=1', params: { id: 'a\u0000' }, body: { name: 'b\u0000' } })).toEqual([
      { in: 'path', name: 'id', reason: expect.stringMatching(/NUL/) },
      { in: 'query', name: 'cursor', reason: 'is not valid percent-encoded UTF-8' },
      { in: 'query', name: 'n', reason: expect.stringMatching(/NUL/) },
      { in: 'query', name: '(query)', reason: 'is not valid percent-encoded UTF-8' },
      { in: 'body', name: 'name', reason: expect.stringMatching(/NUL/) },
    ]);
    expect(textErrorsOf({ url: '/v1/x/\u00ff' })).toEqual([{ in: 'path', name: '(path)', reason: expect.stringMatching(/ASCII/) }]);
    expect(textErrorsOf({ url: '/v1/bundles?name=caf%C3%A9&limit=5+6', params: { id: 'd1' }, body: { ok: ['ü'] } })).toEqual([]);
  });
});

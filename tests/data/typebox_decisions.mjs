// Writes tests/data/typebox-decisions.json: the decisions of TypeBox 1.3.8's Value.Check on
// a corpus of (schema, value) cases at the edges of every keyword and format it checks.
// CI never runs this; tests/unit/test_typebox_decisions.py checks our validator against the
// recorded decisions. To regenerate (offline, node 20):
//
//   mkdir -p /tmp/tb && tar xzf ../shared/reference/typebox-1.3.8.tgz -C /tmp/tb
//   mkdir -p /tmp/tbnode/node_modules && ln -sfn /tmp/tb/package /tmp/tbnode/node_modules/typebox
//   cp tests/data/typebox_decisions.mjs /tmp/tbnode/ && node /tmp/tbnode/typebox_decisions.mjs > tests/data/typebox-decisions.json
//
// Each value is stored as JSON text and parsed by both sides (JSON.parse here, the session
// reader's parser in the test), so what the reference sees of `-0` or 9007199254740993 is
// what it would read from a session file.
import { Value } from 'typebox/value'

const cases = []
const J = (value) => JSON.stringify(value)
const add = (schema, ...texts) => { for (const text of texts) cases.push([schema, text]) }
const addValues = (schema, ...values) => add(schema, ...values.map(J))

// ---------------------------------------------------------------- string length
const strings = [
  '', 'a', 'ab', 'abc', 'e\u0301', 'e\u0301\u0302', '\u0301', '\u0301a', 'a\u0301b',
  '\ud83d\ude00', '\ud83d\ude00a', '\ud83d\udc4d\ud83c\udffd', '\ud83d\udc69\u200d\ud83d\udcbb',
  '\ud83d\udc68\u200d\ud83d\udc69\u200d\ud83d\udc67', '\ud83c\uddeb\ud83c\uddf7',
  '\ud83c\uddeb\ud83c\uddf7\ud83c\udde9', '\r\n', 'a\r\nb', '\u1100\u1161\u11a8', '\ud55c',
  '\u0915\u094d\u0937', '\u0928\u093f', '\ud83c\udff4\udb40\udc67\udb40\udc62\udb40\udc7f',
  '\u2764\ufe0f', 'a\ufe0f', '\u200d', 'a\u200d', 'a\u200db', '\ud800', '\udc00', 'a\ud800',
  '\ud800\ud800', '\u1ab0x', 'x\u1dc0', 'x\ufe20', '\u{1f9d1}\u{1f3fb}\u200d\u{1f91d}\u200d\u{1f9d1}\u{1f3ff}',
  'abcd', 'abcde', 'ab\u0301c',
]
for (const limit of [0, 1, 2, 3, 4, -1, 1.5]) {
  for (const text of strings) {
    addValues({ type: 'string', maxLength: limit }, text)
    addValues({ type: 'string', minLength: limit }, text)
  }
}
addValues({ maxLength: '2' }, 'abc')
addValues({ maxLength: true }, 'abc')
addValues({ maxLength: 1 }, 'abc', 5, ['a', 'b'])

// ---------------------------------------------------------------- numbers
const dividends = [
  '0', '-0', '1', '3', '10', '0.3', '0.7', '0.30000000000000004', '0.1', '0.2', '1.1', '4.35',
  '7.5', '-0.3', '1e-7', '3e-7', '1e20', '9007199254740992', '9007199254740993',
  '9007199254740991', '0.000001', '123.456', '2.5', '1e308', '5e-324', '0.6000000000000001', '99.99',
]
for (const divisor of [0.1, 0.01, 0.3, 3, 2.5, 1e-7, 0.5, 0, -0.1, 0.001, 1e-10, 7, 1.7976931348623157e308, 0.05, 1]) {
  add({ type: 'number', multipleOf: divisor }, ...dividends)
}
add({ type: 'integer', multipleOf: 0.1 }, '3', '3.0', '0.3')
add({ multipleOf: 2 }, '"4"', 'true', '3')
for (const [keyword, bound] of [['maximum', 9007199254740992], ['minimum', 9007199254740992],
  ['exclusiveMaximum', 9007199254740992], ['exclusiveMinimum', 9007199254740992],
  ['maximum', 0], ['minimum', 0], ['exclusiveMaximum', 0], ['exclusiveMinimum', 0], ['maximum', 1.5]]) {
  add({ [keyword]: bound }, '9007199254740993', '9007199254740991', '-0', '0', '1.5', '1', '"x"', 'true')
}
add({ minimum: true }, '-5')
add({ maximum: '3' }, '5')
add({ exclusiveMaximum: true, maximum: 3 }, '3')
add({ type: 'integer' }, '2', '2.0', '2.5', '1e400', '-1e400', '9007199254740993', 'true', '"2"', '1e308', '-0')
add({ type: 'number' }, '2', '1e400', 'true', '"2"', 'null', '-0', '5e-324')
add({ type: 'null' }, 'null', '0', 'false', '""')
add({ type: 'boolean' }, 'true', '0', 'null')
add({ type: 'object' }, '{}', '[]', 'null')
add({ type: 'array' }, '[]', '{}', '"[]"')
add({ type: 'string' }, '""', '1', 'null')
add({ type: 'foo' }, '1', 'null')
add({ type: [] }, '1')
add({ type: ['string', 'null'] }, 'null', '"a"', '1')
add({ type: ['string', 5] }, '1')
add({ type: 5 }, '1')
add({ type: 'bigint' }, '1')
add({ type: 'undefined' }, 'null')
add({ type: 'object', properties: { a: { type: 'function' } } }, '{}', '{"a": 1}')
add({ type: 'object', properties: { toString: { type: 'function' } } }, '{}')

// ---------------------------------------------------------------- enum, const
const equalityValues = [
  '9007199254740992', '9007199254740993', '9007199254740994', '1', '1.0', 'true', '"1"', '-0', '0',
  'null', '[]', '{}', '[1]', '{"0": 1, "length": 1}', '{"a": 1, "b": 2}', '{"b": 2, "a": 1}',
  '[1, [2, 3]]', '[1, [2, 3.0]]', '{"a": [1, {"b": null}]}', '{"a": [1, {"b": false}]}', '"\\ud800"',
  '1e400', '0.30000000000000004', '0.3',
]
const options = [
  [9007199254740992, 1], [0], [-0], [1], [true], ['1'], [null], [[]], [{}], [[1]],
  [{ a: 1, b: 2 }], [[1, [2, 3]]], [{ a: [1, { b: null }] }], ['\ud800'], [0.3], [],
]
for (const list of options) {
  add({ enum: list }, ...equalityValues)
  if (list.length === 1) add({ const: list[0] }, ...equalityValues)
}
add({ const: null }, 'null', '0')
add({ enum: 'abc' }, '"a"')
add({ type: 'string', enum: ['a', 'b'] }, '"a"', '"c"', '1')

// ---------------------------------------------------------------- uniqueItems
add({ type: 'array', uniqueItems: true },
  '[-0, 0]', '[0, 0]', '[0, 0.0]', '[1, 1.0]', '[1, true]', '[null, null]', '[null, false]',
  '[{"a": 1, "b": 2}, {"b": 2, "a": 1}]', '[[[1], 2], [[1, 2]]]', '[[1, 2], [1, 2]]', '[[1], [1]]',
  '["\\ud800", "\\ud801"]', '["a", "b"]', '[{"constructor": 1}, {"constructor": 2}]',
  '[{"a": 1}, {"a": 2}]', '["1", 1]', '[[], {}]', '[{}, {}]', '[[], []]', '[]', '[1e400, 1e400]',
  '[9007199254740992, 9007199254740993]', '[{"a": [1]}, {"a": [1.0]}]', '["", ""]')
add({ type: 'array', uniqueItems: false }, '[1, 1]')
add({ uniqueItems: 'yes' }, '[1, 1]')

// ---------------------------------------------------------------- formats
const formatValues = {
  'date-time': ['2020-12-12T20:20:40Z', '2020-12-12t20:20:40z', '2020-12-12T20:20:40+00:00',
    '2020-12-12T20:20:40', '2020-02-30T00:00:00Z', '2020-12-12T23:59:60Z', '2020-12-12T22:59:60-01:00',
    '2020-12-12T20:20:40.123Z', '2020-12-12 20:20:40Z', '2020-12-12T20:20:40Z\n', '2021-02-29T00:00:00Z',
    '2024-02-29T00:00:00Z', '2020-12-12T24:00:00Z', '2020-12-12T20:20:40+24:00', '\u0662020-12-12T20:20:40Z',
    '2020-12-12TT20:20:40Z'],
  date: ['2020-12-12', '2020-13-01', '2020-02-29', '2019-02-29', '1900-02-29', '2000-02-29', '2020-1-01',
    '2020-12-12\n', '20201212', '2020-00-10', '2020-04-31', '\u0661\u0669\u0669\u0660-01-01'],
  time: ['20:20:40Z', '20:20:40', '20:20:40+01:00', '23:59:60Z', '23:59:60+00:00', '00:59:60+01:00',
    '20:20:40.5z', '24:00:00Z', '20:60:00Z', '20:20:40+23:59', '20:20:40+24:00', '20:20:40Zz', '1:2:3Z'],
  duration: ['P1Y', 'P1M', 'PT1H', 'P1W', 'P1Y2M3DT4H5M6S', 'P', 'PT', 'P1.5Y', 'P1W1D', 'PT1M1H', 'p1y', 'P1D\n'],
  email: ['a@b.com', '\u00e9@x.com', 'a..b@c.com', 'a.b@c.com', '.a@b.com', 'a@b', 'a@-b.com', 'a@b-.com',
    'A@B.COM', 'a+b@c.com', 'a@b..com', 'a@@b.com', 'a@b.c_m', 'a\n@b.com', 'a@b.com\n', '"a"@b.com',
    'a@' + 'b'.repeat(64) + '.com', 'a@' + 'b'.repeat(63) + '.com', 'a@\u212a.com', 'a@k.com'],
  'idn-email': ['a@b.com', '\u00e9@x.com', '\u4f8b@\u4f8b.com', 'a..b@c.com', 'a@b', '\u00e9@-x.com', '\u0661@\u0661.com',
    'a@b_c.com', 'a\u0301@b.com', '\ud83d\ude00@x.com'],
  hostname: ['example.com', 'a', 'a.', '-a.com', 'a-.com', 'a--b.com', 'ab--c.com', 'xn--nxasmq6b.com', 'xn--a.com',
    'xn---a.com', 'a_b.com', '\u00e9.com', 'a'.repeat(63) + '.com', 'a'.repeat(64) + '.com', ('a'.repeat(60) + '.').repeat(4) + 'abc',
    '', 'a..b', '1.2.3.4', 'EXAMPLE.com', 'xn--bcher-kva.com', 'xn--9uc', 'xn---9uc'],
  'idn-hostname': ['example.com', '\u00e9.com', '\u4f8b\u3002\u4f8b', '\u4f8b\uff0e\u4f8b', 'a b.com', '', '-a.com',
    '\u0301a.com', 'l\u00b7l.com', 'a\u00b7b.com', '\u0375\u03b1.com', '\u0375a.com', '\u05d0\u05f3.com', 'a\u05f3.com',
    'a\u200c.com', '\u094d\u200d.com', 'a\u200d.com', '\u30fb.com', '\u30fb\u30a2.com', '\u0660\u06f0.com', '\u0640.com',
    'xn--nxasmq6b.com', 'xn--a.com', 'e\u0301.com', 'ab--c.com', '\ud83d\ude00.com'],
  ipv4: ['1.2.3.4', '255.255.255.255', '256.1.1.1', '01.2.3.4', '0.0.0.0', '1.2.3', '1.2.3.4.5', '1.2.3.04',
    '1..2.3', '1.2.3.4\n', ' 1.2.3.4', '\u0661.2.3.4'],
  ipv6: ['::', '::1', '1::', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7', '1:2:3:4:5:6:7:8:9', '1::2::3', ':::', '1:::2',
    '::ffff:1.2.3.4', '1:2:3:4:5:6:1.2.3.4', '1:2:3:4:5:6:7:1.2.3.4', '12345::', 'g::', '1:', ':1', '1::2:',
    'fe80::1%eth0', '::1.2.3', 'ABCD::ef', '::1\n'],
  uri: ['http://example.com', 'http://example.com/a b', 'urn:isbn:123', 'a:b', '1a:b', 'http://[::1]:80/',
    'http://a@b/c', 'http://a:b@c', 'http://%41@b', 'http://[x@b', 'http://\u00e9.com/', 'http://e.com/\u00e9',
    'http://e.com/%zz', 'http://e.com/%41', 'http://e.com:80a/', '//e.com', '/a', 'mailto:a@b.com',
    'http://e.com/?q=1#f', 'http://e.com/a\\b', 'http://e.com/<', 'http://e.com/{', 'h+t-t.p:x',
    'http://a b.com', 'http://e.com/[x]'],
  'uri-reference': ['http://e.com', '/a/b', 'a/b', '', '#f', '?q', '//e.com', 'a b', '\u00e9', 'a\\b', 'http://e.com/<',
    'a{b', 'a|b', 'a^b', 'a`b', 'a\nb', 'http://e.com/%zz', '1a:b'],
  iri: ['http://example.com', 'http://\u00e9.com/\u00e9', 'a:b', 'http://', 'http:x', 'foo://[x', 'http://a:99999',
    'http://a b', 'mailto:x y', ' http://a ', 'http://a%zz', 'x', 'file:', 'http://[::1]', 'http://[1]',
    'http://xn--a.com', 'http://a..b', 'http://1.2.3.4.5', 'http://0x1.2', 'http://a<b', 'ws://a',
    'javascript:alert(1)', '1a:b', 'http://@c', 'foo://a b', 'foo://a%', 'foo://a^b', 'http://a:b@c/d',
    'https://-a-.com', 'http://256.0.0.1', 'http://a:65535', 'http://a:65536', 'foo:', 'http:/a', 'http:\\\\a\\b'],
  'iri-reference': ['http://example.com', '/a/b', 'a/b', '', '#f', 'a b', 'a\\b', '%zz', '%41', 'a\u0001',
    'httpx//e.com', 'http://', 'http://[1]', '//e.com', '//[1]', '\u00e9', 'a:b', ':a', 'http://a:99999'],
  'uri-template': ['http://e.com/{id}', 'http://e.com/{+path}', '{a,b}', '{a:3}', '{a*}', '{a:0}', '{a', 'a}',
    '{}', '{a b}', 'http://e.com/%zz', 'http://e.com/%41', '{%41}', 'a b', '\u00e9', '{A}'],
  url: ['http://example.com', 'https://example.com/a', 'ftp://e.com', 'http://localhost', 'http://10.0.0.1',
    'http://192.168.1.1', 'http://8.8.8.8', 'http://e.com:8080', 'http://\u00e9\u00e9.com', 'HTTP://E.COM',
    'mailto:a@b.com', 'http://e.c', 'http://a@e.com', 'http://e.com/a b', 'http://-e.com', 'http://e-.com',
    'http://e.com:1', 'http://223.255.255.254', 'http://224.0.0.1', 'http://e.com/\u00e9'],
  uuid: ['123e4567-e89b-12d3-a456-426614174000', '123E4567-E89B-12D3-A456-426614174000',
    '123e4567e89b12d3a456426614174000', '123e4567-e89b-12d3-a456-42661417400', 'g23e4567-e89b-12d3-a456-426614174000',
    '123e4567-e89b-12d3-a456-426614174000\n'],
  'json-pointer': ['', '/', '/a', '/a~0b', '/a~1b', '/a~2', 'a', '/a/b', '/\u00e9', '/a~'],
  'json-pointer-uri-fragment': ['#', '#/a', '#/a%20b', '#/a b', '#/a~0', '#/%zz', 'a', '#/\u00e9', '#/a~2'],
  'relative-json-pointer': ['0', '1/a', '0#', '01', '-1', '1/a~2', '10/b', '0/'],
  regex: ['a', '', '(', '[a-z]', 'a{', 'a{2,1}', '\\-', '(?<=a)b', '(?<n>a)\\k<n>', '\\k', '[z-a]', '\\', 'a**',
    '*a', ')', '(?<n>a)(?<n>b)', '\\p{L}', '\\u{41}', '{1}', 'a|', '(?:a)', '(?x)', '[', ']', '\\1', '(a)\\2',
    '\\cA', '\\c', '[\\d-z]', '\\x4', '\\u004', '(?=a)*', '(?<=a)*', '(?<a>)\\k<b>'],
  unknown: ['anything'],
}
for (const [format, values] of Object.entries(formatValues)) {
  addValues({ type: 'string', format }, ...values)
}
addValues({ format: 'email' }, 5, null, 'x')
addValues({ format: 5 }, 'x')
addValues({ format: 'toString' }, 'x')

// ---------------------------------------------------------------- patterns
const patterns = {
  '^a+$': ['a', 'aa', 'b', 'a\n'], 'a\\-b': ['a-b'], '[a\\-b]': ['-', 'c'], '^\\d+$': ['123', '\u0661'],
  '^.$': ['a', '\n', '\r', '\u2028', '\ud83d\ude00'], '^\\s$': [' ', '\u00a0', '\ufeff', '\u000b', '\u0085'],
  '(?<=a)b': ['ab', 'b'], '^\\w+$': ['abc', '\u00e9'], '(': ['x'], '^\\p{L}+$': ['abc', '\u00e9', '1'],
  '\\/': ['/'], 'a{': ['a{'], '^[^a]$': ['\ud83d\ude00'], '\\u{1F600}': ['\ud83d\ude00'], '^(a|ab)$': ['ab'],
  '\\bfoo\\b': ['a foo b', 'afoo'], '[\\u0041-\\u005A]': ['B', 'b'], '\\p{Script=Greek}': ['\u03b1', 'a'],
  '\\_': ['_'], '\\:': [':'], '^[a-z]{2,3}$': ['ab', 'abcd'], '(a)\\1': ['aa', 'ab'],
}
for (const [pattern, values] of Object.entries(patterns)) {
  addValues({ type: 'string', pattern }, ...values)
}
addValues({ pattern: 5 }, 'x')
addValues({ pattern: '^a$' }, 5)

// ---------------------------------------------------------------- objects
const O = (schema, ...texts) => add({ type: 'object', ...schema }, ...texts)
O({ required: ['toString'] }, '{}')
O({ required: ['valueOf', 'hasOwnProperty'] }, '{}')
O({ required: ['constructor'] }, '{}', '{"constructor": 1}')
O({ required: ['__proto__'] }, '{}', '{"__proto__": 1}')
O({ required: ['a'] }, '{}', '{"a": null}')
O({ required: 'a' }, '{}')
O({ required: ['a', 5] }, '{}')
O({ properties: { toString: { type: 'string' } } }, '{}', '{"toString": "x"}')
O({ properties: { valueOf: {} } }, '{}')
O({ properties: { a: { type: 'string' } } }, '{}', '{"a": 1}', '{"a": "x"}')
O({ properties: { a: 5 } }, '{"a": 1}')
O({ properties: { a: { type: 'string' } }, additionalProperties: false }, '{"a": "x"}', '{"a": "x", "b": 1}', '{}')
O({ properties: { a: 5 }, additionalProperties: false }, '{"a": 1}')
O({ properties: { 'a.b': {} }, additionalProperties: false }, '{"a.b": 1}', '{"axb": 1}')
O({ properties: { 'a$': {} }, additionalProperties: false }, '{"a$": 1}', '{"a": 1}')
O({ patternProperties: { '^x-': { type: 'string' } }, additionalProperties: false }, '{"x-a": "s"}', '{"x-a": 1}', '{"y": 1}')
O({ patternProperties: { '^x-': { type: 'string' } } }, '{"x-a": 1}', '{"y": 1}')
O({ patternProperties: { '(': {} } }, '{}', '{"a": 1}')
O({ patternProperties: { '\\-': {} }, additionalProperties: false }, '{"-": 1}')
O({ additionalProperties: { type: 'integer' } }, '{"a": 1}', '{"a": "x"}')
O({ additionalProperties: 'no' }, '{"a": 1}')
O({ dependentRequired: { a: ['b'] } }, '{}', '{"a": 1}', '{"a": 1, "b": 2}', '{"b": 1}')
O({ dependentRequired: { toString: ['b'] } }, '{"c": 1}', '{}')
O({ dependencies: { a: ['b'] } }, '{"a": 1}')
O({ dependencies: { a: { required: ['c'] } } }, '{"a": 1}', '{"a": 1, "c": 1}')
O({ dependentSchemas: { a: { required: ['c'] } } }, '{"a": 1}', '{"a": 1, "c": 1}')
O({ dependentSchemas: { toString: false } }, '{"x": 1}', '{}')
O({ propertyNames: { maxLength: 2 } }, '{"ab": 1}', '{"abc": 1}')
O({ propertyNames: { pattern: '^[a-z]+$' } }, '{"ab": 1}', '{"A": 1}')
O({ propertyNames: false }, '{}', '{"a": 1}')
O({ minProperties: 1 }, '{}', '{"a": 1}')
O({ maxProperties: 1 }, '{"a": 1, "b": 2}')
O({ maxProperties: '1' }, '{"a": 1, "b": 2}')
add({ required: ['a'] }, '[]', '"x"', '{}')
add({ properties: { length: { type: 'string' } } }, '[1]', '{"length": 1}')

// ---------------------------------------------------------------- arrays
const A = (schema, ...texts) => add({ type: 'array', ...schema }, ...texts)
A({ items: { type: 'string' } }, '[]', '["a"]', '["a", 1]')
A({ items: [{ type: 'string' }, { type: 'integer' }] }, '["a", 1]', '[1, "a"]', '["a"]', '["a", 1, null]')
A({ items: [{ type: 'string' }], additionalItems: false }, '["a"]', '["a", 1]')
A({ items: [{ type: 'string' }], additionalItems: { type: 'integer' } }, '["a", 1]', '["a", "b"]')
A({ items: { type: 'string' }, additionalItems: false }, '["a", "b"]')
A({ prefixItems: [{ type: 'string' }], items: false }, '[]', '["a"]', '["a", 1]')
A({ prefixItems: [{ type: 'string' }], items: { type: 'integer' } }, '["a", 1]', '["a", "b"]')
A({ prefixItems: [{ type: 'string' }] }, '[1]', '[]')
A({ contains: { type: 'integer' } }, '[]', '["a"]', '["a", 1]')
A({ contains: { type: 'integer' }, minContains: 0 }, '[]', '["a"]')
A({ contains: { type: 'integer' }, minContains: 2 }, '[1]', '[1, 2]')
A({ contains: { type: 'integer' }, maxContains: 1 }, '[1]', '[1, 2]')
A({ maxContains: 1 }, '[1, 2]')
A({ minItems: 1 }, '[]', '[1]')
A({ maxItems: 1 }, '[1, 2]', '[1]')
A({ minItems: 1.5 }, '[1]', '[1, 2]')
A({ items: { $ref: '#' } }, '[[]]', '[[1]]')

// ---------------------------------------------------------------- refs
add({ $ref: '#/$defs/a', $defs: { a: { type: 'string' } } }, '1', '"x"')
add({ $ref: '#/definitions/a', definitions: { a: { type: 'string' } } }, '1', '"x"')
add({ $ref: '#/$defs/missing' }, '1')
add({ $ref: '#/$defs/a', properties: { x: { $defs: { a: { type: 'string' } } } } }, '1', '"x"')
add({ $ref: 'other.json#/$defs/a', $defs: { a: { type: 'string' } } }, '1', '"x"')
add({ $ref: '#' , type: 'object', properties: { child: { $ref: '#' } } }, '{"child": {"child": {}}}', '{"child": 1}')
add({ properties: { n: { $ref: '#node' } }, $defs: { x: { $anchor: 'node', type: 'integer' } } }, '{"n": 1}', '{"n": "a"}')
add({ $id: 'https://e.test/root.json', properties: { n: { $ref: 'count.json' } },
  $defs: { c: { $id: 'https://e.test/count.json', type: 'integer' } } }, '{"n": 1}', '{"n": "a"}')
add({ $ref: '#/$defs/a%20b', $defs: { 'a b': { type: 'string' } } }, '1', '"x"')
add({ $ref: '#/$defs/a~1b', $defs: { 'a/b': { type: 'string' } } }, '1', '"x"')
add({ $ref: '#/$defs/%zz' }, '1')
add({ $ref: '#/maxLength', maxLength: 3 }, '"x"')
add({ $ref: '#/$defs/a', $defs: { a: { type: 'string' } }, maxLength: 1 }, '"ab"', '"a"')
add({ $ref: 'toString' }, '1')
add({ $ref: 5, type: 'string' }, '"x"')
add({ $schema: 'http://json-schema.org/draft-07/schema#', items: [{ type: 'string' }] }, '[1]', '["a"]')
add({ $schema: 'http://json-schema.org/draft-04/schema#', maximum: 3, exclusiveMaximum: true }, '3')

// ---------------------------------------------------------------- applicators
add({ if: { type: 'string' }, then: { maxLength: 1 }, else: { type: 'integer' } }, '"a"', '"ab"', '1', '1.5')
add({ then: { type: 'string' } }, '1')
add({ if: { type: 'string' } }, '1')
add({ not: { type: 'string' } }, '1', '"a"')
add({ not: 5 }, '1')
add({ allOf: [{ type: 'string' }, { maxLength: 1 }] }, '"a"', '"ab"')
add({ allOf: [{ type: 'string' }, 5] }, '1')
add({ anyOf: [{ type: 'string' }, { type: 'integer' }] }, '1', 'null')
add({ anyOf: [] }, '1')
add({ oneOf: [{ type: 'integer' }, { minimum: 0 }] }, '1', '-1', '1.5')
add({ oneOf: [] }, '1')
add({ properties: { a: {} }, unevaluatedProperties: false }, '{"a": 1}', '{"a": 1, "b": 2}', '[]', '[1]')
add({ allOf: [{ properties: { a: {} } }], unevaluatedProperties: false }, '{"a": 1}', '{"a": 1, "b": 2}')
add({ anyOf: [{ properties: { a: { type: 'string' } } }, { properties: { b: {} } }], unevaluatedProperties: false },
  '{"a": "x"}', '{"a": 1}', '{"b": 1}', '{"a": 1, "b": 1}')
add({ if: { properties: { a: { type: 'string' } } }, else: { properties: { b: {} } }, unevaluatedProperties: false },
  '{"a": 1, "b": 2}', '{"a": "x"}', '{"b": 2}')
add({ prefixItems: [{}], unevaluatedItems: false }, '[1]', '[1, 2]')
add({ items: [{}], unevaluatedItems: { type: 'string' } }, '[1, "a"]', '[1, 2]')
add({ contains: { type: 'integer' }, unevaluatedItems: false }, '[1]', '[1, "a"]')
add({ $ref: '#/$defs/a', $defs: { a: { properties: { a: {} } } }, unevaluatedProperties: false }, '{"a": 1}', '{"a": 1, "b": 1}')
add({ unevaluatedItems: false }, '[]', '[1]', '{"a": 1}')
add({ type: 'object', properties: { s: { type: 'string', maxLength: 1 }, n: { type: 'number', multipleOf: 0.1 },
  e: { enum: [9007199254740992, 1] }, u: { type: 'array', uniqueItems: true }, m: { type: 'string', format: 'email' } },
  required: ['s'], additionalProperties: false },
  '{"s": "e\\u0301", "n": 0.7, "e": 9007199254740993, "u": [-0, 0], "m": "a@b.co"}',
  '{"s": "e\\u0301", "m": "\\u00e9@x.com"}', '{"n": 0.3}')
add(true, '1')
add(false, '1')
add({}, '1')
add({ 'x-fabric-enum-candidate': true, type: 'string' }, '"a"')

// ---------------------------------------------------------------- random mixtures
// A seeded generator (so the file is reproducible) of schemas mixing the keywords above,
// each checked against values drawn from the same pools.
let seed = 27
const rand = () => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed / 2147483648 }
const pick = (list) => list[Math.floor(rand() * list.length)]
const scalars = [null, true, false, 0, 1, -1, 2.5, 0.1, 0.3, 1e21, 9007199254740992, '', 'a', 'ab',
  'e\u0301', '\ud83d\ude00', 'a@b.co', '2024-02-29', '1.2.3.4', 'http://h/', 'toString', 'x-y']
const keys = ['a', 'b', 'toString', 'x-1', '0', 'length', '']
const randomValue = (depth) => {
  const r = rand()
  if (depth > 2 || r < 0.55) return pick(scalars)
  if (r < 0.75) return Array.from({ length: Math.floor(rand() * 4) }, () => randomValue(depth + 1))
  const out = {}
  for (let i = Math.floor(rand() * 4); i > 0; i--) out[pick(keys)] = randomValue(depth + 1)
  return out
}
const leaves = [
  () => ({ type: pick(['string', 'integer', 'number', 'boolean', 'null', 'object', 'array', 'nope']) }),
  () => ({ type: [pick(['string', 'null']), pick(['integer', 'array'])] }),
  () => ({ enum: Array.from({ length: 1 + Math.floor(rand() * 3) }, () => randomValue(2)) }),
  () => ({ const: randomValue(1) }),
  () => ({ [pick(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'])]: pick([0, 1, 2.5, -1]) }),
  () => ({ multipleOf: pick([0.1, 0.5, 2, 3, 0.3]) }),
  () => ({ [pick(['minLength', 'maxLength', 'minItems', 'maxItems', 'minProperties', 'maxProperties'])]: pick([0, 1, 2]) }),
  () => ({ uniqueItems: true }),
  () => ({ format: pick(['email', 'date', 'ipv4', 'uri', 'hostname', 'uuid', 'date-time', 'nope']) }),
  () => ({ pattern: pick(['^a', 'b$', '^[0-9]+$', '^.{2}$', '\\p{L}', '[']) }),
  () => ({ required: [pick(keys)] }),
  () => ({ dependentRequired: { [pick(keys)]: [pick(keys)] } }),
  () => ({ propertyNames: { maxLength: 1 } }),
  () => ({ contains: { type: 'string' } }),
]
const randomSchema = (depth) => {
  let schema = {}
  for (let i = 1 + Math.floor(rand() * 2); i > 0; i--) Object.assign(schema, pick(leaves)())
  if (depth < 2) {
    const r = rand()
    if (r < 0.25) schema.properties = { [pick(keys)]: randomSchema(depth + 1), [pick(keys)]: randomSchema(depth + 1) }
    else if (r < 0.35) schema.items = randomSchema(depth + 1)
    else if (r < 0.42) schema.prefixItems = [randomSchema(depth + 1)]
    else if (r < 0.5) schema[pick(['anyOf', 'oneOf', 'allOf'])] = [randomSchema(depth + 1), randomSchema(depth + 1)]
    else if (r < 0.55) schema.not = randomSchema(depth + 1)
    else if (r < 0.6) Object.assign(schema, { if: randomSchema(depth + 1), then: randomSchema(depth + 1), else: randomSchema(depth + 1) })
    else if (r < 0.66) { schema.properties = { a: randomSchema(depth + 1) }; schema.additionalProperties = rand() < 0.5 ? false : randomSchema(depth + 1) }
    else if (r < 0.7) { schema.patternProperties = { '^x': randomSchema(depth + 1) }; schema.additionalProperties = false }
    else if (r < 0.74) { schema.properties = { a: {} }; schema.unevaluatedProperties = false }
  }
  return schema
}
for (let n = 0; n < 400; n++) {
  const schema = randomSchema(0)
  for (let v = 0; v < 4; v++) addValues(schema, randomValue(0))
}

// ---------------------------------------------------------------- random strings per format
// Strings drawn from the pieces formats are made of (same seeded generator).
const pieces = ['a', 'b', 'z', 'A', '0', '1', '9', '.', '-', '_', '~', ':', '/', '?', '#', '[', ']', '@',
  '!', '$', '&', "'", '(', ')', '*', '+', ',', ';', '=', '%', '%41', '%zz', ' ', '\\', '\u00e9', '\u4f8b',
  '\ud83d\ude00', '\u0301', 'x', 'n', '{', '}', '<', '>', '|', '^', '`', '"', 'T', 'Z', 't', 'z', 'P', 'Y',
  'W', 'D', 'H', 'M', 'S', '\n', '\t', '::', 'xn--', 'http://', 'https://', 'mailto:', '1.2.3.4', '256',
  '0x1', '[::1]', ':80', '..']
for (const format of Object.keys(formatValues)) {
  for (let i = 0; i < 150; i++) {
    let text = ''
    for (let j = Math.floor(rand() * 8); j > 0; j--) text += pick(pieces)
    addValues({ type: 'string', format }, text)
  }
}

// ---------------------------------------------------------------- random applicator trees
// Refs, anchors, applicators and the unevaluated keywords mixed (same seeded generator).
const treeKeys = ['a', 'b', 'c', 'toString']
const treeScalars = [null, 1, 'x', true, 2.5, [], {}]
const treeValue = (d) => {
  const r = rand()
  if (d > 2 || r < 0.4) return pick(treeScalars)
  if (r < 0.6) return Array.from({ length: Math.floor(rand() * 4) }, () => treeValue(d + 1))
  const o = {}
  for (let i = Math.floor(rand() * 4); i > 0; i--) o[pick(treeKeys)] = treeValue(d + 1)
  return o
}
const treeLeaf = () => pick([{ type: 'string' }, { type: 'integer' }, { type: 'object' }, { type: 'array' }, {},
  { required: [pick(treeKeys)] }, { minProperties: 1 }, { const: pick(treeScalars) }, { not: { type: 'null' } },
  true, false, { $ref: '#/$defs/d' }, { $ref: '#' }, { $ref: '#/$defs/missing' }, { $ref: '#anc' }])
const tree = (d) => {
  if (d > 2) return treeLeaf()
  const s = {}
  if (rand() < 0.2) s.properties = { [pick(treeKeys)]: tree(d + 1), [pick(treeKeys)]: tree(d + 1) }
  if (rand() < 0.3) s[pick(['allOf', 'anyOf', 'oneOf'])] = [tree(d + 1), tree(d + 1)]
  if (rand() < 0.2) Object.assign(s, { if: tree(d + 1), then: tree(d + 1) })
  if (rand() < 0.15) s.else = tree(d + 1)
  if (rand() < 0.2) s.unevaluatedProperties = pick([false, { type: 'integer' }])
  if (rand() < 0.15) s.unevaluatedItems = pick([false, { type: 'string' }])
  if (rand() < 0.15) s.prefixItems = [tree(d + 1)]
  if (rand() < 0.15) s.items = tree(d + 1)
  if (rand() < 0.1) s.contains = tree(d + 1)
  if (rand() < 0.1) s.dependentSchemas = { [pick(treeKeys)]: tree(d + 1) }
  if (rand() < 0.1) s.patternProperties = { '^[ab]': tree(d + 1) }
  if (rand() < 0.1) s.additionalProperties = tree(d + 1)
  if (rand() < 0.2) s.$ref = pick(['#/$defs/d', '#/$defs/e', '#anc'])
  if (rand() < 0.1) s.propertyNames = { maxLength: 1 }
  return Object.keys(s).length ? s : treeLeaf()
}
for (let n = 0; n < 300; n++) {
  const root = tree(0)
  if (typeof root !== 'object') continue
  const anchored = tree(2)
  root.$defs = { d: tree(2), e: { $anchor: 'anc', ...(typeof anchored === 'object' ? anchored : {}) } }
  for (let v = 0; v < 3; v++) addValues(root, treeValue(0))
}

// Cases of one schema share a line: {"schema": ..., "values": [[JSON text, accepts], ...]}.
const groups = new Map()
for (const [schema, text] of cases) {
  let accepts
  try {
    accepts = Value.Check(schema, JSON.parse(text))
  } catch {
    accepts = false // the reference counts any exception as a rejection
  }
  const key = JSON.stringify(schema)
  if (!groups.has(key)) groups.set(key, [])
  groups.get(key).push([text, accepts])
}
const lines = [...groups].map(([key, values]) => `{"schema":${key},"values":${JSON.stringify(values)}}`)
process.stdout.write(`{"typebox": "1.3.8", "node": ${JSON.stringify(process.version)}, "schemas": [\n${lines.join(',\n')}\n]}\n`)

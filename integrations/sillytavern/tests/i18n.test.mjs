// The extension's words (extension/i18n.js): every key in both languages, every key the panel and the code use is
// in the table, and no text of the panel is left outside it.
// Run: node --test integrations/sillytavern/tests/

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

import { LANGUAGES, STRINGS, languageOf, translator } from '../extension/i18n.js';

const extension = path.join(path.dirname(path.dirname(fileURLToPath(import.meta.url))), 'extension');
const read = name => fs.readFileSync(path.join(extension, name), 'utf8');
const CJK = /[\u4e00-\u9fff]/;
const placeholders = text => [...text.matchAll(/\{(\w+)\}/g)].map(m => m[1]).sort();

test('every key has a text in each language, Chinese really Chinese, the same placeholders in both', () => {
    assert.deepEqual(LANGUAGES, ['en', 'zh']);
    for (const [key, texts] of Object.entries(STRINGS)) {
        assert.equal(texts.length, LANGUAGES.length, key);
        for (const text of texts) assert.ok(typeof text === 'string' && text.trim(), `${key} has an empty text`);
        const [en, zh] = texts;
        assert.ok(CJK.test(zh), `${key}: the Chinese text has no Chinese: ${zh}`);
        assert.ok(!CJK.test(en), `${key}: the English text has Chinese in it: ${en}`);
        assert.deepEqual(placeholders(en), placeholders(zh), `${key}: placeholders differ`);
    }
});

test("the panel's every data-jiyi-i18n key is in the table, and every text of the panel is marked", () => {
    const html = read('settings.html');
    const keys = [...html.matchAll(/data-jiyi-i18n="([^"]+)"/g)].map(m => m[1]);
    assert.ok(keys.length >= 25, `only ${keys.length} marked texts`);
    for (const key of keys) assert.ok(key in STRINGS, `settings.html uses ${key}, which i18n.js lacks`);
    // An element with text of its own (not only child elements) must carry the marker.
    const withText = /<(b|span|label|option|small|h4)\b([^>]*)>([^<]*[A-Za-z][^<]*)</g;
    for (const [, tag, attributes, text] of html.matchAll(withText)) {
        assert.match(attributes, /data-jiyi-i18n=/, `<${tag}> "${text.trim()}" has no data-jiyi-i18n`);
    }
});

test('every key the code asks for is in the table, and every key of the table is used', () => {
    const sources = ['index.js', 'status.js', 'note.js', 'settings.html'].map(read).join('\n');
    const quoted = new Set([...sources.matchAll(/['"]([a-z_]+(?:\.[a-z_]+)+)['"]/g)].map(m => m[1]));
    const asked = [...sources.matchAll(/\bt\(\s*'([^']+)'/g)].map(m => m[1]);
    for (const key of asked) assert.ok(key in STRINGS, `t('${key}') is not in i18n.js`);
    for (const key of Object.keys(STRINGS)) {
        assert.ok(quoted.has(key), `${key} is in i18n.js but nothing uses it`);
    }
});

test("SillyTavern's locale picks the language: any Chinese locale is Chinese, everything else English", () => {
    for (const locale of ['zh-cn', 'zh-CN', 'zh-tw', 'zh', 'zh_CN']) assert.equal(languageOf(locale), 'zh', locale);
    for (const locale of ['en', 'en-us', 'ja-jp', 'zhx', '', null, undefined]) assert.equal(languageOf(locale), 'en');
});

test('t fills placeholders, keeps unknown ones, and shows an unknown key as itself', () => {
    const zh = translator('zh');
    assert.equal(zh('note.used', { count: 3 }), 'jiyi：用了 3 条记忆');
    assert.equal(translator('en')('note.used'), 'jiyi: {count} memories used');
    assert.equal(zh('no.such.key'), 'no.such.key');
    assert.equal(translator('fr')('panel.title'), 'jiyi Memory', 'an unknown language is English');
});

// The README's plugin config.json example loads as the plugin reads it, and names only settings that exist.
// Run: node --test integrations/sillytavern/tests/

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

import { DEFAULTS, loadConfig } from '../plugin/config.mjs';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

test("the README's config.json example is read by the plugin as written", () => {
    const [example] = [...readme.matchAll(/```json\n([\s\S]*?)```/g)].map(m => m[1]);
    const parsed = JSON.parse(example);
    for (const key of Object.keys(parsed)) assert.ok(key in DEFAULTS, `the README names an unknown setting: ${key}`);
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'jiyi-readme-')), 'config.json');
    fs.writeFileSync(file, example);
    const config = loadConfig({ env: {}, file });
    assert.equal(config.url, 'http://127.0.0.1:8888');
    assert.equal(config.consoleUrl, 'https://memory.example.org');
    assert.deepEqual(Object.keys(config.userApiKeys), ['alice']);
    assert.equal(loadConfig({ env: { JIYI_CONSOLE_URL: 'http://h:1/' }, file }).consoleUrl, 'http://h:1');
});

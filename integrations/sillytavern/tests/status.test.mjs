// What the extension tells the user: the status line blames the part that fails (status.js), the transport tells
// those parts apart (transport.js, against a scripted fetch), and the note on a reply lists what was injected
// (note.js). Run: node --test integrations/sillytavern/tests/

import assert from 'node:assert/strict';
import test from 'node:test';

import { translator } from '../extension/i18n.js';
import { EXTRA_KEY, attachNote, noteFromRecord, noteHtml } from '../extension/note.js';
import { effectiveSettings } from '../extension/settings.js';
import {
    consoleMemoryUrl, consoleScopeUrl, describeLast, describeStatus, problemText, urlField,
} from '../extension/status.js';
import { JiyiHttpError, Transport, Unreachable } from '../extension/transport.js';

const en = translator('en');
const zh = translator('zh');
const settings = effectiveSettings({});
const pluginOk = { present: true, jiyi: true, writes: true, problem: null, url: 'http://127.0.0.1:8888' };

// --- the status line ---

test('plugin and jiyi fine: the route, "reachable", and who writes', () => {
    const text = describeStatus({ settings, plugin: pluginOk, direct: null, last: null }, en);
    assert.match(text, /server plugin → jiyi at http:\/\/127\.0\.0\.1:8888/);
    assert.match(text, /jiyi is reachable/);
    assert.match(text, /written by the plugin each time the chat is saved/);
    assert.doesNotMatch(text, /next save/, 'nothing to catch up');
});

test('jiyi frozen behind the plugin is a timeout of jiyi, not "plugin unreachable"; missed turns come on the next save', () => {
    const plugin = { ...pluginOk, jiyi: false, problem: { kind: 'timeout', via: 'plugin', ms: 1000 } };
    const text = describeStatus({ settings, plugin, direct: null, last: null }, en);
    assert.match(text, /did not answer within 1000 ms: it is busy or frozen/);
    assert.doesNotMatch(text, /plugin did not answer/);
    assert.match(text, /written on the next save once it is back/);
});

test('each failing part is named: plugin missing, jiyi down (plugin or browser), key refused', () => {
    const missing = describeStatus({ settings: effectiveSettings({ transport: 'plugin' }),
        plugin: { present: false }, direct: null, last: null }, en);
    assert.match(missing, /server plugin did not answer.*enableServerPlugins: true/);

    const down = describeStatus({ settings, plugin: { ...pluginOk, jiyi: false,
        problem: { kind: 'unreachable', via: 'plugin', url: 'http://127.0.0.1:8888' } }, direct: null, last: null }, en);
    assert.match(down, /cannot be reached from SillyTavern's server: is `jiyi serve` running/);

    const direct = describeStatus({ settings, plugin: { present: false },
        direct: { ok: false, problem: { kind: 'unreachable', via: 'direct', url: settings.serviceUrl } }, last: null }, en);
    assert.match(direct, /no server plugin found/);
    assert.match(direct, /cannot be reached from this browser.*JIYI_CORS_ORIGINS/);
    assert.match(direct, /written by this browser after each reply/);
    assert.match(direct, /written after the next reply once it is back/);

    const refused = describeStatus({ settings, plugin: { ...pluginOk, jiyi: false,
        problem: { kind: 'auth', status: 401 } }, direct: null, last: null }, en);
    assert.match(refused, /refused the call \(HTTP 401\).*JIYI_API_KEY/);
});

test('the status line in Chinese', () => {
    const plugin = { ...pluginOk, jiyi: false, problem: { kind: 'timeout', via: 'plugin', ms: 1500 } };
    const text = describeStatus({ settings, plugin, direct: null, last: null }, zh);
    assert.match(text, /通道：服务器插件 → jiyi/);
    assert.match(text, /1500 毫秒内没有应答/);
    assert.match(text, /下次保存聊天时补写/);
    assert.equal(describeStatus({ settings: effectiveSettings({ enabled: false }), plugin: pluginOk }, zh),
        '长期记忆已关闭：不检索，也不写入。');
});

test('the last reply: memories and time, nothing found, a problem, or why it was skipped', () => {
    assert.equal(describeLast({ injected: [{ id: 'a' }, { id: 'b' }], addedMs: 41.6 }, en), 'Last reply: 2 memories, 42 ms.');
    assert.equal(describeLast({ injected: [{ id: 'a' }], addedMs: 5 }, en), 'Last reply: 1 memory, 5 ms.');
    assert.equal(describeLast({ injected: [], addedMs: 5 }, en), 'Last reply: no relevant memory found, 5 ms.');
    assert.match(describeLast({ problem: { kind: 'auth', status: 403 } }, en), /^Last reply: no memories — jiyi refused/);
    assert.equal(describeLast({ skipped: true, reason: 'off' }, zh), '上一次回复：跳过了检索（长期记忆已关闭）。');
    assert.equal(describeLast({ skipped: true, reason: 'type', type: 'quiet' }, en),
        'Last reply: recall skipped (quiet generation).');
});

test('console links: the user narrowed to the character, and one memory; ids are encoded', () => {
    assert.equal(consoleScopeUrl('http://127.0.0.1:8888/', 'default-user', 'default_Seraphina.png'),
        'http://127.0.0.1:8888/ui/users/default-user?agent_id=default_Seraphina.png');
    assert.equal(consoleScopeUrl('http://h:1', 'a b', '小林 #1.png'),
        'http://h:1/ui/users/a%20b?agent_id=%E5%B0%8F%E6%9E%97+%231.png');
    assert.equal(consoleScopeUrl('http://h:1', 'alice', null), 'http://h:1/ui/users/alice');
    assert.equal(consoleMemoryUrl('http://h:1', 'm/1'), 'http://h:1/ui/memories/m%2F1');
});

// --- the note on a reply ---

test('a note only when there is something to tell: memories used, or none because of a failure', () => {
    assert.equal(noteFromRecord(null), null);
    assert.equal(noteFromRecord({ skipped: true, reason: 'off' }), null);
    assert.deepEqual(noteFromRecord({ injected: [], problem: null, at: 3 }),
        { v: 1, at: 3, memories: [], problem: null }, 'nothing relevant found: a quiet note, told apart from an outage');
    const used = noteFromRecord({ injected: [{ id: 'm1', memory: '用户对海鲜过敏' }], problem: null, at: 5 });
    assert.deepEqual(used, { v: 1, at: 5, memories: [{ id: 'm1', text: '用户对海鲜过敏' }], problem: null });
    const failed = noteFromRecord({ injected: [], problem: { kind: 'unreachable', via: 'plugin' } });
    assert.deepEqual(failed.problem, { kind: 'unreachable', via: 'plugin' });
});

test('the note lists the injected memories, escaped, each with its console link; collapsed', () => {
    const note = { v: 1, memories: [{ id: 'm1', text: '用户对海鲜过敏' }, { id: 'm2', text: '<b>x</b> & "y"' }],
        problem: null };
    const html = noteHtml(note, { t: en, memoryUrl: id => consoleMemoryUrl('http://h:1', id) });
    assert.match(html, /^<details class="jiyi-memory-note" data-jiyi-note="used">/);
    assert.doesNotMatch(html, /<details[^>]* open/);
    assert.match(html, /jiyi: 2 memories used/);
    assert.match(html, /<li data-memory-id="m1"><span class="jiyi-memory-note-text">用户对海鲜过敏<\/span> <a href="http:\/\/h:1\/ui\/memories\/m1"/);
    assert.match(html, /&lt;b&gt;x&lt;\/b&gt; &amp; &quot;y&quot;/);
    assert.doesNotMatch(html, /<b>x/);
    assert.match(noteHtml({ ...note, memories: note.memories.slice(0, 1) }, { t: zh }), /jiyi：用了 1 条记忆/);
});

test('a reply that got no memory says so quietly, unlike a failed recall', () => {
    const html = noteHtml({ v: 1, memories: [], problem: null }, { t: zh });
    assert.match(html, /data-jiyi-note="none"/);
    assert.match(html, /jiyi：没有与这条回复相关的记忆/);
    assert.doesNotMatch(html, /<details|problem/);
});

test('the note of a failed recall says why and that the turn is caught up', () => {
    const html = noteHtml({ v: 1, memories: [], problem: { kind: 'timeout', ms: 1500 } }, { t: zh });
    assert.match(html, /data-jiyi-note="problem" data-kind="timeout"/);
    assert.match(html, /jiyi：这条回复没有用到记忆/);
    assert.match(html, /1500 毫秒内没有应答/);
    assert.match(html, /这一轮对话会补写进去/);
    const degraded = noteHtml({ v: 1, memories: [], problem: { kind: 'degraded', detail: 'EmbedderError' } }, { t: en });
    assert.doesNotMatch(degraded, /written to jiyi once it is back/, 'writes were not stopped by a search failure');
});

test('attachNote puts the note on the message and on its current swipe; null takes it off', () => {
    const message = { mes: 'hi', extra: { api: 'openai' }, swipe_id: 1, swipe_info: [{ extra: {} }, { extra: {} }] };
    attachNote(message, { v: 1, memories: [], problem: null });
    assert.ok(message.extra[EXTRA_KEY]);
    assert.ok(message.swipe_info[1].extra[EXTRA_KEY]);
    assert.equal(message.swipe_info[0].extra[EXTRA_KEY], undefined);
    attachNote(message, null);
    assert.equal(message.extra[EXTRA_KEY], undefined);
    assert.equal(message.swipe_info[1].extra[EXTRA_KEY], undefined);
    assert.equal(message.extra.api, 'openai');
    const bare = { mes: 'x' };
    attachNote(bare, { v: 1 });
    assert.deepEqual(bare.extra, { [EXTRA_KEY]: { v: 1 } });
});

// --- the transport tells the failing parts apart ---

function transportWith(fetchImpl, overrides = {}) {
    globalThis.fetch = fetchImpl;
    const transport = new Transport({
        getSettings: () => effectiveSettings({ serviceUrl: 'http://127.0.0.1:8888', ...overrides }),
        getRequestHeaders: () => ({}), getUserHandle: () => 'alice',
    });
    transport.plugin = { ...transport.plugin, present: true, url: 'http://jiyi:8888' };
    return transport;
}

const json = (status, body) => async () => new Response(JSON.stringify(body), { status,
    headers: { 'content-type': 'application/json' } });

async function failure(promise) {
    try {
        await promise;
    } catch (error) {
        return error;
    }
    assert.fail('expected a rejection');
}

test('through the plugin: a jiyi timeout, jiyi down, a refused key and a missing plugin are four problems', async () => {
    const timedOut = await failure(transportWith(json(504, { error: 'x', kind: 'timeout', ms: 1450 }))
        .context('plugin', {}));
    assert.ok(timedOut instanceof Unreachable);
    assert.deepEqual(timedOut.problem, { kind: 'timeout', via: 'plugin', url: 'http://jiyi:8888', ms: 1450 });

    const down = await failure(transportWith(json(502, { error: 'x', kind: 'unreachable', url: 'http://jiyi:8888' }))
        .context('plugin', {}));
    assert.equal(down.problem.kind, 'unreachable');
    assert.equal(down.problem.via, 'plugin');

    const refused = await failure(transportWith(json(401, { error: 'x', kind: 'auth', status: 401 }))
        .context('plugin', {}));
    assert.ok(refused instanceof JiyiHttpError);
    assert.deepEqual(refused.problem, { kind: 'auth', status: 401 });

    const missing = await failure(transportWith(async () => new Response('Cannot POST', { status: 404 }))
        .context('plugin', {}));
    assert.equal(missing.problem.kind, 'plugin_missing');
});

test('our own deadline is a timeout whichever way the call went, never "unreachable"', async () => {
    const hanging = (url, { signal }) => new Promise((_, reject) => {
        signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
    });
    for (const via of ['plugin', 'direct']) {
        // A controller, not AbortSignal.timeout: node does not stay alive for the latter's timer.
        const deadline = new AbortController();
        setTimeout(() => deadline.abort(), 30);
        const error = await failure(transportWith(hanging).context(via, {}, deadline.signal));
        assert.equal(error.problem.kind, 'timeout', via);
        assert.equal(error.problem.via, via);
    }
});

test('direct: a refused connection is "unreachable from this browser"; 401 and 403 are the key', async () => {
    const refused = await failure(transportWith(async () => { throw new TypeError('Failed to fetch'); })
        .context('direct', {}));
    assert.deepEqual(refused.problem, { kind: 'unreachable', via: 'direct', url: 'http://127.0.0.1:8888' });
    for (const status of [401, 403]) {
        const error = await failure(transportWith(json(status, { detail: 'a key is required' })).context('direct', {}));
        assert.equal(error.problem.kind, 'auth');
    }
    const broken = await failure(transportWith(json(422, { detail: 'messages: field required' })).context('direct', {}));
    assert.equal(broken.problem.kind, 'jiyi_error');
    assert.match(problemText(broken.problem, en), /messages: field required/);
});

test('the direct probe checks /health and that this user is served without a key', async () => {
    const asked = [];
    const ok = await transportWith(async url => { asked.push(url); return new Response('{}', { status: 200 }); })
        .probeDirect();
    assert.deepEqual(ok, { ok: true, problem: null });
    assert.deepEqual(asked, ['http://127.0.0.1:8888/health', 'http://127.0.0.1:8888/memories?user_id=alice&limit=1']);
    const locked = await transportWith(async url => new Response('{}', { status: url.endsWith('/health') ? 200 : 401 }))
        .probeDirect();
    assert.equal(locked.problem.kind, 'auth');
});

test('console links follow the route: the plugin\'s console URL through the plugin, the setting otherwise', () => {
    const transport = transportWith(async () => new Response('{}'));
    transport.plugin.consoleUrl = 'https://memory.example.org';
    assert.equal(transport.consoleBase(), 'https://memory.example.org');
    assert.equal(transportWith(async () => new Response('{}'), { transport: 'direct' }).consoleBase(),
        'http://127.0.0.1:8888');
});

test('Chinese sentences are joined without spaces, English ones with', () => {
    const zhText = describeStatus({ settings, plugin: pluginOk, direct: null, last: null }, zh);
    assert.doesNotMatch(zhText, /。\s/);
    assert.match(zhText, /jiyi 可以访问。记忆由插件/);
    assert.match(describeStatus({ settings, plugin: pluginOk, direct: null, last: null }, en), /reachable\. Memories/);
});

// --- the URL field ---

test('through the plugin the URL field shows the address the plugin uses, read-only, and says where it is set', () => {
    const plugin = { ...pluginOk, url: 'http://10.0.0.5:9000' };
    for (const transport of ['auto', 'plugin']) {
        const field = urlField({ settings: effectiveSettings({ transport }), plugin }, en);
        assert.deepEqual([field.value, field.readOnly], ['http://10.0.0.5:9000', true], transport);
        assert.match(field.title, /plugins\/jiyi\/config\.json or JIYI_URL/);
    }
    assert.match(urlField({ settings, plugin }, zh).title, /服务器插件/);
});

test('on the direct route, or with no plugin found, the URL field is the browser\'s own address, editable', () => {
    const own = effectiveSettings({ serviceUrl: 'http://127.0.0.1:7777' });
    const noPlugin = urlField({ settings: own, plugin: { present: false } }, en);
    assert.deepEqual([noPlugin.value, noPlugin.readOnly], ['http://127.0.0.1:7777', false]);
    const direct = urlField({ settings: effectiveSettings({ transport: 'direct', serviceUrl: 'http://127.0.0.1:7777' }),
        plugin: { ...pluginOk, url: 'http://10.0.0.5:9000' } }, en);
    assert.deepEqual([direct.value, direct.readOnly], ['http://127.0.0.1:7777', false]);
});

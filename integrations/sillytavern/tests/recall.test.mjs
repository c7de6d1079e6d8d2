// Unit tests of the extension's recall chain (extension/recall.js) with a scripted transport and generateRaw.
// Run: node --test integrations/sillytavern/tests/

import assert from 'node:assert/strict';
import test from 'node:test';

import { Deadline, chatMessages, cleanRewrite, recall, rewriteInput } from '../extension/recall.js';
import { DEFAULT_SETTINGS, effectiveSettings } from '../extension/settings.js';
import { Unreachable } from '../extension/transport.js';

const chat = [
    { is_user: false, name: 'Lin', mes: '你好！' },
    { is_user: true, name: 'Ann', mes: '我昨晚失眠了' },
    { is_user: false, name: 'Lin', mes: '辛苦了' },
    { is_system: true, name: 'System', mes: 'a note' },
    { is_user: true, name: 'Ann', mes: '你今天有什么不一样？' },
];
const context = { characters: [{ avatar: 'Lin.png' }], characterId: 0, name1: 'Ann', name2: 'Lin' };

/** A transport answering /context from a script; records every body it was given. */
function scripted(...answers) {
    const bodies = [];
    return {
        bodies,
        choose: async () => 'plugin',
        context: async (via, body) => {
            bodies.push(body);
            const next = answers.shift();
            if (next instanceof Error) throw next;
            return next;
        },
    };
}

const miss = { memory_block: '', memories: [], stages: [{ stage: 'question', outcome: 'miss' }], degraded: false };
const hit = { memory_block: 'Relevant long-term memory:\n- 用户昨晚失眠', memories: [{ id: 'm1' }],
    stages: [{ stage: 'rewrite', outcome: 'hit' }], degraded: false };

async function run(transport, settings, extra = {}) {
    const deadline = new Deadline(settings.deadlineMs);
    try {
        return await recall({ chat, settings, transport, context: { ...context, ...extra }, deadline });
    } finally {
        deadline.dispose();
    }
}

test('messages are the spoken ones in OpenAI format; system notes are left out', () => {
    assert.deepEqual(chatMessages(chat, 3), [
        { role: 'user', content: '我昨晚失眠了', name: 'Ann' },
        { role: 'assistant', content: '辛苦了', name: 'Lin' },
        { role: 'user', content: '你今天有什么不一样？', name: 'Ann' },
    ]);
});

test('rewrite off: one call, no rewrite, scoped to the character, the block comes back', async () => {
    const transport = scripted(hit);
    const { block, record } = await run(transport, effectiveSettings({}));
    assert.equal(block, hit.memory_block);
    assert.deepEqual(record.injectedIds, ['m1']);
    assert.equal(transport.bodies.length, 1);
    const [body] = transport.bodies;
    assert.equal(body.rewrite, false);
    assert.equal(body.agent_id, 'Lin.png');
    assert.equal(body.user_id, undefined, 'the user is decided by the plugin or the transport, not here');
    assert.ok(body.deadline_ms > 1000 && body.deadline_ms < 1500);
});

test("jiyi's LLM: one call with rewrite and the user's prompt", async () => {
    const transport = scripted(hit);
    await run(transport, effectiveSettings({ rewrite: true, rewriteSource: 'jiyi', rewritePrompt: 'P' }));
    assert.equal(transport.bodies.length, 1);
    assert.equal(transport.bodies[0].rewrite, true);
    assert.equal(transport.bodies[0].rewrite_prompt, 'P');
});

test("SillyTavern's connection: rewrite only after a miss, then a second call with rewritten_query", async () => {
    const prompts = [];
    const generateRaw = async options => {
        prompts.push(options);
        return 'Query: "结合最近对话：用户昨晚失眠，询问今天状态有何变化"';
    };
    const transport = scripted(miss, hit);
    const settings = effectiveSettings({ rewrite: true, rewriteSource: 'sillytavern', deadlineMs: 3000 });
    const { block, record } = await run(transport, settings, { generateRaw });
    assert.equal(block, hit.memory_block);
    assert.equal(transport.bodies[0].rewrite, false);
    assert.equal(transport.bodies[1].rewritten_query, '结合最近对话：用户昨晚失眠，询问今天状态有何变化');
    assert.equal(prompts[0].systemPrompt, settings.rewritePrompt);
    const input = JSON.parse(prompts[0].prompt);
    assert.deepEqual(Object.keys(input), ['user_name', 'char_name', 'user_question', 'recent_conversation']);
    assert.equal(input.user_question, '你今天有什么不一样？');
    assert.match(input.recent_conversation, /Ann: 我昨晚失眠了/);
    assert.equal(record.stages.find(s => s.stage === 'st_rewrite').outcome, 'done');

    const found = scripted(hit);
    await run(found, settings, { generateRaw: async () => assert.fail('no rewrite after a hit') });
    assert.equal(found.bodies.length, 1);
});

test("a slow SillyTavern rewrite is given up within the deadline; the first answer stands", async () => {
    const transport = scripted(miss);
    const settings = effectiveSettings({ rewrite: true, rewriteSource: 'sillytavern', deadlineMs: 700 });
    const started = performance.now();
    const { block, record } = await run(transport, settings, { generateRaw: () => new Promise(() => {}) });
    assert.ok(performance.now() - started < 700);
    assert.equal(block, '');
    assert.equal(record.stages.find(s => s.stage === 'st_rewrite').outcome, 'timeout');
    assert.equal(transport.bodies.length, 1);
});

test('jiyi unreachable: nothing else is tried, nothing is thrown', async () => {
    const transport = scripted(new Unreachable('plugin unreachable (deadline reached)'));
    const settings = effectiveSettings({ rewrite: true, rewriteSource: 'sillytavern' });
    const { block, record } = await run(transport, settings, { generateRaw: async () => assert.fail('skipped') });
    assert.equal(block, '');
    assert.equal(record.unreachable, true);
    assert.equal(record.degraded, true);
    assert.equal(transport.bodies.length, 1);
});

test('no character or no user message: skipped with a reason', async () => {
    const none = await recall({ chat, settings: effectiveSettings({}), transport: scripted(),
        context: { ...context, characterId: undefined }, deadline: new Deadline(100) });
    assert.equal(none.record.reason, 'no character selected');
    const empty = await recall({ chat: chat.slice(0, 1), settings: effectiveSettings({}), transport: scripted(),
        context, deadline: new Deadline(100) });
    assert.equal(empty.record.reason, 'no user message');
});

test('a rewrite answer is cleaned to one query line', () => {
    assert.equal(cleanRewrite('<think>hmm</think>\n\n**Query:** 用户昨晚失眠'), '用户昨晚失眠');
    assert.equal(cleanRewrite('```\n"user could not sleep"\n```'), 'user could not sleep');
    assert.equal(cleanRewrite('  \n'), null);
});

test('the rewrite input keeps the newest lines within 1200 characters', () => {
    const long = Array.from({ length: 40 }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `消息${i} `.repeat(10) }));
    const input = rewriteInput([...long, { role: 'user', content: '那个后来怎么样？' }], 'Ann', 'Lin');
    assert.ok(input.recent_conversation.length <= 1200);
    assert.match(input.recent_conversation, /消息39/);
    assert.equal(input.user_question, '那个后来怎么样？');
});

test('settings: numbers are clamped, bad choices and a blank prompt fall back to the defaults', () => {
    const effective = effectiveSettings({ topK: 500, deadlineMs: 'x', transport: 'carrier-pigeon', rewritePrompt: ' ',
        serviceUrl: 'http://jiyi:8888///' });
    assert.equal(effective.topK, 50);
    assert.equal(effective.deadlineMs, DEFAULT_SETTINGS.deadlineMs);
    assert.equal(effective.transport, 'auto');
    assert.equal(effective.rewritePrompt, DEFAULT_SETTINGS.rewritePrompt);
    assert.equal(effective.serviceUrl, 'http://jiyi:8888');
});

test('the record names the injected memories (for the note on the reply) and what failed', async () => {
    const { record } = await run(scripted({ ...hit, memories: [{ id: 'm1', memory: '用户昨晚失眠', score: 0.9 }] }),
        effectiveSettings({}));
    assert.deepEqual(record.injected, [{ id: 'm1', memory: '用户昨晚失眠' }]);
    assert.equal(record.problem, null);

    const frozen = await run(scripted(new Unreachable('no answer', { kind: 'timeout', via: 'plugin' })),
        effectiveSettings({ deadlineMs: 1200 }));
    assert.deepEqual(frozen.record.problem, { kind: 'timeout', via: 'plugin', ms: 1200 });
    assert.equal(frozen.record.unreachable, true, 'still unreachable for the reply: it goes ahead without memories');

    const late = await run(scripted({ ...miss, degraded: true, error: 'DeadlineExceeded: search did not finish' }),
        effectiveSettings({}));
    assert.equal(late.record.problem.kind, 'timeout');
    const broken = await run(scripted({ ...miss, degraded: true, error: 'BackendUnavailable: embedder down' }),
        effectiveSettings({}));
    assert.deepEqual(broken.record.problem, { kind: 'degraded', detail: 'BackendUnavailable: embedder down' });
});

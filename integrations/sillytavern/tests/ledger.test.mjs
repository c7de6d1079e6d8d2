// Unit tests of the turn ledger (plugin/ledger.js, copied to extension/ledger.js) against an in-memory jiyi.
// Run: node --test integrations/sillytavern/tests/

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import test from 'node:test';
import { fileURLToPath } from 'node:url';

import { TurnLedger, findTurns, replyHash } from '../plugin/ledger.js';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

/** A jiyi that extracts one memory per user message ("fact: <text>"), like infer=true with async_mode. */
class FakeJiyi {
    constructor() {
        this.memories = new Map();
        this.events = new Map();
        this.calls = [];
        this.down = false;
        this.next = 1;
    }

    #check(call) {
        this.calls.push(call);
        if (this.down) throw new Error('connection refused');
    }

    async add(body) {
        this.#check('add');
        this.bodies = [...(this.bodies ?? []), body];
        const id = `m${this.next++}`;
        const user = body.messages.find(m => m.role === 'user');
        const text = `fact: ${user.content}`;
        const existing = [...this.memories.values()].find(m => m.memory === text && m.user_id === body.user_id
            && m.agent_id === body.agent_id);
        let results;
        if (existing) {
            // Said again: NONE, the memory gains this turn's messages as provenance.
            existing.provenance.push(...body.messages.map(m => ({ external_id: m.id })));
            results = [];
        } else {
            this.memories.set(id, {
                id, memory: text, metadata: body.metadata, user_id: body.user_id, agent_id: body.agent_id,
                run_id: body.run_id, provenance: body.messages.map(m => ({ external_id: m.id })),
            });
            results = [{ id, memory: text, event: 'ADD' }];
        }
        const eventId = `e${this.next++}`;
        this.events.set(eventId, { id: eventId, status: 'SUCCEEDED', results });
        return { event_id: eventId, status: 'PENDING', results: [] };
    }

    async event(id) { this.#check('event'); return this.events.get(id) ?? null; }
    async get(id) { this.#check('get'); return this.memories.get(id) ?? null; }
    async update(id, text) { this.#check('update'); this.memories.get(id).memory = text; return {}; }
    async remove(id) { this.#check('remove'); this.memories.delete(id); return {}; }
    async list({ user_id, agent_id, run_id }) {
        this.#check('list');
        return { results: [...this.memories.values()].filter(m => m.user_id === user_id && m.agent_id === agent_id
            && m.run_id === run_id) };
    }

    texts() {
        return [...this.memories.values()].map(m => m.memory).sort();
    }
}

function setup() {
    const jiyi = new FakeJiyi();
    const states = new Map();
    const ledger = new TurnLedger({
        jiyi,
        loadState: async key => structuredClone(states.get(key) ?? null),
        saveState: async (key, state) => { states.set(key, structuredClone(state)); },
        log: { info() {}, warn() {} },
        sleep: async () => {},
    });
    return { jiyi, ledger, states };
}

const user = mes => ({ is_user: true, is_system: false, mes, name: 'Ann' });
const bot = (mes, avatar = 'Sera.png', name = 'Sera') => ({ is_user: false, is_system: false, mes, name, original_avatar: avatar });
const solo = messages => ({
    userId: 'ann', runId: 'Sera - chat1', messages,
    resolveSpeaker: () => ({ agentId: 'Sera.png', characterName: 'Sera' }),
});

test('the two copies of the ledger are identical', () => {
    const plugin = fs.readFileSync(path.join(root, 'plugin', 'ledger.js'), 'utf8');
    const extension = fs.readFileSync(path.join(root, 'extension', 'ledger.js'), 'utf8');
    assert.equal(extension, plugin, 'copy plugin/ledger.js to extension/ledger.js');
});

test('the latest turn is written once, with its keys', async () => {
    const { jiyi, ledger } = setup();
    const chat = [bot('Hello!'), user('我对海鲜过敏'), bot('好的，记住了')];
    await ledger.sync('c', solo(chat));
    await ledger.sync('c', solo(chat));
    assert.equal(jiyi.calls.filter(c => c === 'add').length, 1);
    const [memory] = jiyi.memories.values();
    assert.deepEqual(memory.metadata, {
        source: 'sillytavern', character_name: 'Sera', st_turn: 'Sera - chat1#1',
        st_reply_hash: replyHash('我对海鲜过敏', '好的，记住了'),
    });
    assert.equal(memory.run_id, 'Sera - chat1');
    // A retry of the same write is an add jiyi answers once (Idempotency): the key is the turn's and its reply's.
    assert.equal(jiyi.bodies[0].idempotency_key, `Sera - chat1#1:${replyHash('我对海鲜过敏', '好的，记住了')}`);
});

test('a save after the user message alone writes nothing new', async () => {
    const { jiyi, ledger } = setup();
    await ledger.sync('c', solo([bot('Hi'), user('one'), bot('r1')]));
    await ledger.sync('c', solo([bot('Hi'), user('one'), bot('r1'), user('two')]));
    assert.deepEqual(jiyi.texts(), ['fact: one']);
});

test('a swipe undoes the discarded reply and writes the chosen one', async () => {
    const { jiyi, ledger, states } = setup();
    await ledger.sync('c', solo([bot('Hi'), user('I like tea'), bot('first reply')]));
    const before = [...jiyi.memories.keys()];
    await ledger.sync('c', solo([bot('Hi'), user('I like tea'), bot('...')]));  // generating the new swipe
    assert.deepEqual(jiyi.texts(), [], 'the swiped-away turn is gone while the new reply is generated');
    await ledger.sync('c', solo([bot('Hi'), user('I like tea'), bot('second reply')]));
    assert.deepEqual(jiyi.texts(), ['fact: I like tea']);
    assert.notDeepEqual([...jiyi.memories.keys()], before);
    const [memory] = jiyi.memories.values();
    assert.equal(memory.metadata.st_reply_hash, replyHash('I like tea', 'second reply'));
    assert.equal(states.get('c').turns.length, 1);
});

test('deleting the last reply undoes its turn; deleting a message above moves turns without undo', async () => {
    const { jiyi, ledger } = setup();
    await ledger.sync('c', solo([bot('Hi'), user('one'), bot('r1')]));
    await ledger.sync('c', solo([bot('Hi'), user('one'), bot('r1'), user('two'), bot('r2')]));
    assert.deepEqual(jiyi.texts(), ['fact: one', 'fact: two']);
    await ledger.sync('c', solo([user('one'), bot('r1'), user('two'), bot('r2')]));  // greeting deleted
    assert.deepEqual(jiyi.texts(), ['fact: one', 'fact: two']);
    assert.equal(jiyi.calls.filter(c => c === 'add').length, 2);
    await ledger.sync('c', solo([user('one'), bot('r1'), user('two')]));  // last reply deleted
    assert.deepEqual(jiyi.texts(), ['fact: one']);
    await ledger.sync('c', solo([user('one'), bot('r1 edited'), user('two')]));  // reply edited
    assert.deepEqual(jiyi.texts(), ['fact: one'], 'undone, then written again as the latest complete turn');
    const [memory] = jiyi.memories.values();
    assert.equal(memory.metadata.st_reply_hash, replyHash('one', 'r1 edited'));
});

test('a memory another turn confirmed is kept when the first turn goes', async () => {
    const { jiyi, ledger } = setup();
    await ledger.sync('c', solo([user('I like tea'), bot('r1')]));
    await ledger.sync('c', solo([user('I like tea'), bot('r1'), user('I like tea'), bot('r2')]));
    assert.equal(jiyi.memories.size, 1);
    await ledger.sync('c', solo([user('I like tea'), bot('r1 swiped'), user('I like tea'), bot('r2')]));
    assert.deepEqual(jiyi.texts(), ['fact: I like tea'], 'said again in the second turn: still true');
});

test('an UPDATE made by an undone turn is reverted', async () => {
    const { jiyi, ledger } = setup();
    jiyi.memories.set('old', { id: 'old', memory: 'User lives in Beijing', metadata: {}, provenance: [] });
    const originalAdd = jiyi.add.bind(jiyi);
    jiyi.add = async body => {
        const answer = await originalAdd(body);
        jiyi.add = originalAdd;  // the regenerated reply changes nothing more
        jiyi.memories.get('old').memory = 'User lives in Shanghai';
        jiyi.events.get(answer.event_id).results.push(
            { id: 'old', event: 'UPDATE', memory: 'User lives in Shanghai', previous_memory: 'User lives in Beijing' });
        return answer;
    };
    await ledger.sync('c', solo([user('I moved to Shanghai'), bot('r1')]));
    await ledger.sync('c', solo([user('I moved to Shanghai'), bot('r1 regenerated')]));
    assert.equal(jiyi.memories.get('old').memory, 'User lives in Beijing');
});

test('a memory deleted by an undone turn comes back', async () => {
    const { jiyi, ledger } = setup();
    jiyi.memories.set('old', { id: 'old', memory: 'User is vegetarian', metadata: {}, provenance: [],
        user_id: 'ann', agent_id: 'Sera.png', run_id: 'Sera - chat1' });
    const originalAdd = jiyi.add.bind(jiyi);
    jiyi.add = async body => {
        const answer = await originalAdd(body);
        jiyi.add = originalAdd;
        jiyi.memories.delete('old');
        jiyi.events.get(answer.event_id).results.push({ id: 'old', event: 'DELETE', memory: 'User is vegetarian' });
        return answer;
    };
    await ledger.sync('c', solo([user('I eat steak now'), bot('r1')]));
    assert.deepEqual(jiyi.texts(), ['fact: I eat steak now']);
    await ledger.sync('c', solo([user('I eat steak now'), bot('r1 swiped')]));
    assert.ok(jiyi.calls.includes('add'));
    assert.deepEqual(jiyi.texts(), ['fact: I eat steak now', 'fact: User is vegetarian']);
});

test('a placeholder reply is not written; jiyi down means the turn is tried again next sync', async () => {
    const { jiyi, ledger } = setup();
    await ledger.sync('c', solo([user('one'), bot('...')]));
    assert.equal(jiyi.calls.length, 0);
    jiyi.down = true;
    await ledger.sync('c', solo([user('one'), bot('r1')]));
    assert.equal(jiyi.memories.size, 0);
    jiyi.down = false;
    await ledger.sync('c', solo([user('one'), bot('r1')]));
    assert.deepEqual(jiyi.texts(), ['fact: one']);
});

test('turns left behind by an outage are caught up; an edited older turn is written again', async () => {
    const { jiyi, ledger } = setup();
    await ledger.sync('c', solo([user('one'), bot('r1')]));
    jiyi.down = true;
    await ledger.sync('c', solo([user('one'), bot('r1'), user('two'), bot('r2')]));
    jiyi.down = false;
    await ledger.sync('c', solo([user('one'), bot('r1'), user('two'), bot('r2'), user('three'), bot('r3')]));
    assert.deepEqual(jiyi.texts(), ['fact: one', 'fact: three', 'fact: two']);
    await ledger.sync('c', solo([user('one, corrected'), bot('r1'), user('two'), bot('r2'), user('three'), bot('r3')]));
    assert.deepEqual(jiyi.texts(), ['fact: one, corrected', 'fact: three', 'fact: two']);
});

test('a chat new to the ledger gets its latest turn only, not its history', async () => {
    const { jiyi, ledger } = setup();
    await ledger.sync('c', solo([user('one'), bot('r1'), user('two'), bot('r2')]));
    assert.deepEqual(jiyi.texts(), ['fact: two']);
});

test('group chat: each member keeps its own memory, the group id in metadata', async () => {
    const { jiyi, ledger } = setup();
    const snapshot = messages => ({
        userId: 'ann', runId: 'group-chat-1', groupId: '1700000000000', messages,
        resolveSpeaker: m => ({ agentId: m.original_avatar, characterName: m.name }),
    });
    await ledger.sync('g', snapshot([user('I love hiking'), bot('Nice!', 'A.png', 'Alice')]));
    await ledger.sync('g', snapshot([user('I love hiking'), bot('Nice!', 'A.png', 'Alice'), bot('Me too', 'B.png', 'Bob')]));
    const agents = [...jiyi.memories.values()].map(m => [m.agent_id, m.metadata.group_id, m.metadata.character_name]);
    assert.deepEqual(agents.sort(), [['A.png', '1700000000000', 'Alice'], ['B.png', '1700000000000', 'Bob']]);
    assert.equal(findTurns(snapshot([]).messages, () => null).length, 0);
});

test('quick successive saves are serialized and only the newest waiting one is synced', async () => {
    const { jiyi, ledger } = setup();
    const first = ledger.submit('c', solo([user('one'), bot('r1')]));
    ledger.submit('c', solo([user('one'), bot('r1 v2')]));
    const last = ledger.submit('c', solo([user('one'), bot('r1 v3')]));
    await Promise.all([first, last]);
    const [memory] = jiyi.memories.values();
    assert.equal(jiyi.memories.size, 1);
    assert.equal(memory.metadata.st_reply_hash, replyHash('one', 'r1 v3'));
    assert.equal(jiyi.calls.filter(c => c === 'add').length, 2, 'v2 was superseded before its turn came');
});

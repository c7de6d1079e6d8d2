// The turn ledger: which chat turns have become jiyi memories, kept in step with the chat as it is edited.
//
// THIS FILE EXISTS TWICE, byte for byte: plugin/ledger.js (the server plugin writes on chat save) and
// extension/ledger.js (the extension writes by itself when the plugin is absent). The two folders are installed
// separately, so they cannot share one file; tests/ledger.test.mjs fails if the copies differ. It uses no Node or
// browser API, only what it is given.
//
// A turn is one user message and one reply to it. Each turn written to jiyi is recorded here with a hash of its two
// texts. On every sync (a chat save, or a chat event in the browser) the ledger compares what it recorded with the
// chat as it is now:
//   - a recorded turn whose texts are unchanged stays (found by position, or elsewhere if messages above it were
//     deleted);
//   - a recorded turn that is gone (swiped away, regenerated, edited, deleted, hidden) is undone: the memories its
//     extraction added are deleted, the memories it rewrote get their previous text back, the memories it deleted
//     are added again;
//   - then the turns not yet recorded are written: the latest one, turns after the newest recorded one that an
//     outage or a missed save left behind, and turns that replaced a recorded one in place (swipe, edit).
// Undo runs before the write, so a swiped-away reply is gone from jiyi before the new reply's facts are reconciled
// with what is there. Syncs of one chat never overlap, and only the newest waiting snapshot is synced (a snapshot
// superseded before its turn came is not worth writing: the newer one says what the chat is).

export const MEMORY_SOURCE = 'sillytavern';

const MAX_WRITES_PER_SYNC = 4;  // a bound on catching up after an outage
const MAX_UNDO_TRIES = 20;  // syncs an unfinished undo is retried in (jiyi down, or its extraction still queued)
const FINAL_EVENT_STATES = new Set(['SUCCEEDED', 'FAILED']);
const PLACEHOLDER_REPLIES = new Set(['', '...']);  // what SillyTavern shows while a reply is still being generated

/** A short stable hash of a turn's two texts (two FNV-1a 32-bit hashes over UTF-16 units), the same in Node and in
 * the browser, where crypto.subtle is missing on plain-http LAN addresses. */
export function replyHash(userText, replyText) {
    const text = `${userText}\u0000${replyText}`;
    let a = 0x811c9dc5;
    let b = 0x01000193 ^ 0x5bd1e995;
    for (let i = 0; i < text.length; i++) {
        const unit = text.charCodeAt(i);
        a = Math.imul(a ^ unit, 0x01000193);
        b = Math.imul(b ^ unit, 0x5bd1e995) ^ (b >>> 13);
    }
    return (a >>> 0).toString(16).padStart(8, '0') + (b >>> 0).toString(16).padStart(8, '0');
}

/** A message that takes part in turns: not a system or hidden message (SillyTavern marks both `is_system`). */
function isSpoken(message) {
    return message && !message.is_system && typeof message.mes === 'string';
}

/**
 * Every complete turn of a chat, oldest first: each reply paired with the nearest user message above it. In a group
 * chat several members may answer one user message; each answer is a turn of its own (same user message).
 * @param {object[]} messages SillyTavern chat messages (without the chat file's header line)
 * @param {(message: object) => ({agentId: string, characterName: string}|null)} resolveSpeaker whose reply it is
 */
export function findTurns(messages, resolveSpeaker) {
    const turns = [];
    let userIndex = -1;
    messages.forEach((message, index) => {
        if (!isSpoken(message)) return;
        if (message.is_user) {
            userIndex = index;
            return;
        }
        if (userIndex < 0) return;  // the greeting, or replies before the user said anything
        const speaker = resolveSpeaker(message);
        if (!speaker || !speaker.agentId) return;
        const userText = messages[userIndex].mes;
        const replyText = message.mes;
        turns.push({
            userIndex, replyIndex: index, userText, replyText,
            userName: messages[userIndex].name || 'User',
            agentId: speaker.agentId, characterName: speaker.characterName || message.name || '',
            hash: replyHash(userText, replyText),
        });
    });
    return turns;
}

/** The `st_turn` key of a turn: the chat and the index of its user message. */
export function turnKey(runId, userIndex) {
    return `${runId}#${userIndex}`;
}

/** Prefix of the message ids sent with a turn; jiyi keeps them as provenance, which tells this turn's memories from
 * memories that other turns confirmed too. */
function provenancePrefix(recorded) {
    return `${recorded.stTurn}~${recorded.hash}/`;
}

export class TurnLedger {
    /**
     * @param {object} options
     * @param {object} options.jiyi client: add(body), event(id), get(id), update(id, text), remove(id), list(scope);
     *   each returns the parsed answer, null for 404, or throws
     * @param {(chatKey: string) => Promise<object|null>} options.loadState
     * @param {(chatKey: string, state: object) => Promise<void>} options.saveState
     * @param {{info: Function, warn: Function}} [options.log]
     * @param {number} [options.undoWaitMs] how long an undo waits for a turn whose extraction is still running
     * @param {number} [options.maxTurns] recorded turns kept per chat (older turns are no longer followed)
     */
    constructor({ jiyi, loadState, saveState, log = console, undoWaitMs = 5000, pollMs = 250, maxTurns = 500,
        sleep = (ms) => new Promise(resolve => setTimeout(resolve, ms)) }) {
        this.jiyi = jiyi;
        this.loadState = loadState;
        this.saveState = saveState;
        this.log = log;
        this.undoWaitMs = undoWaitMs;
        this.pollMs = pollMs;
        this.maxTurns = maxTurns;
        this.sleep = sleep;
        this.chats = new Map();  // chatKey -> {running: Promise|null, next: snapshot|null}
    }

    /**
     * Sync a chat snapshot in the background. Resolves when this snapshot (or a newer one of the same chat) has been
     * synced; never rejects: a memory write must never disturb the chat.
     * @param {string} chatKey the chat's identity for the ledger state (unique per user)
     * @param {{userId: string, runId: string, groupId?: string, messages: object[],
     *          resolveSpeaker: Function}} snapshot
     */
    submit(chatKey, snapshot) {
        let chat = this.chats.get(chatKey);
        if (!chat) {
            chat = { running: null, next: null };
            this.chats.set(chatKey, chat);
        }
        chat.next = snapshot;
        chat.running ??= this.#drain(chatKey, chat);
        return chat.running;
    }

    async #drain(chatKey, chat) {
        while (chat.next) {
            const snapshot = chat.next;
            chat.next = null;
            try {
                await this.sync(chatKey, snapshot);
            } catch (error) {
                this.log.warn(`[jiyi] memory sync of a chat failed: ${describe(error)}`);
            }
        }
        // No await between the loop's last look at chat.next and here: a submit() from now on starts a new drain.
        chat.running = null;
        this.chats.delete(chatKey);
    }

    /** One reconciliation of the recorded turns with the chat as it is in `snapshot`, then the writes of the turns
     * not yet recorded. Throws only when the state cannot be read or saved. */
    async sync(chatKey, snapshot) {
        const state = normalizeState(await this.loadState(chatKey));
        const turns = findTurns(snapshot.messages, snapshot.resolveSpeaker);
        const claimed = new Set();
        const kept = [];
        const gone = [];
        let changed = false;
        for (const recorded of state.turns) {
            const match = findRecorded(turns, recorded, claimed);
            if (!match) {
                gone.push(recorded);
                continue;
            }
            claimed.add(match);
            // Messages deleted above a turn move it; it keeps its st_turn key (that is what its memories carry).
            changed ||= match.userIndex !== recorded.userIndex || match.replyIndex !== recorded.replyIndex;
            kept.push({ ...recorded, userIndex: match.userIndex, replyIndex: match.replyIndex });
        }
        const unfinished = [];
        for (const recorded of [...state.undo, ...gone]) {
            if (await this.#undo(snapshot, recorded)) continue;
            const tries = (recorded.tries ?? 0) + 1;
            if (tries < MAX_UNDO_TRIES) unfinished.push({ ...recorded, tries });
            else this.log.warn(`[jiyi] gave up undoing turn ${recorded.stTurn} after ${tries} tries`);
        }
        changed ||= gone.length > 0 || state.undo.length > 0;

        for (const turn of turnsToWrite(turns, claimed, kept, gone)) {
            const written = await this.#write(snapshot, turn);
            if (!written) break;  // jiyi is not taking writes now; the next sync tries again
            kept.push(written);
            changed = true;
        }
        if (changed) {
            kept.sort((a, b) => a.replyIndex - b.replyIndex);
            await this.saveState(chatKey, { v: 1, turns: kept.slice(-this.maxTurns), undo: unfinished });
        }
    }

    /** Write one turn to jiyi; the recorded turn, or null when jiyi could not take it (tried again next sync). */
    async #write(snapshot, turn) {
        const stTurn = turnKey(snapshot.runId, turn.userIndex);
        const recorded = { stTurn, agentId: turn.agentId, hash: turn.hash, userIndex: turn.userIndex,
            replyIndex: turn.replyIndex, eventId: null };
        const prefix = provenancePrefix(recorded);
        const metadata = { source: MEMORY_SOURCE, character_name: turn.characterName, st_turn: stTurn,
            st_reply_hash: turn.hash };
        if (snapshot.groupId) metadata.group_id = snapshot.groupId;
        try {
            const answer = await this.jiyi.add({
                messages: [
                    { role: 'user', content: turn.userText, name: turn.userName, id: `${prefix}user` },
                    { role: 'assistant', content: turn.replyText, name: turn.characterName, id: `${prefix}reply` },
                ],
                user_id: snapshot.userId, agent_id: turn.agentId, run_id: snapshot.runId, metadata,
                infer: true,
                // jiyi answers as soon as the turn is stored; extraction (maybe an LLM call) runs in its worker.
                async_mode: true,
                // A retry of this write (a sync that timed out after jiyi stored it) stores nothing twice; a new
                // reply to the same message is another turn (another hash).
                idempotency_key: `${stTurn}:${turn.hash}`,
            });
            recorded.eventId = answer?.event_id ?? null;
            return recorded;
        } catch (error) {
            this.log.warn(`[jiyi] could not write turn ${stTurn}: ${describe(error)}`);
            return null;
        }
    }

    /** Remove what a turn that no longer exists put into jiyi. True when done, false to try again next sync. */
    async #undo(snapshot, recorded) {
        try {
            let finished = true;
            if (recorded.eventId) {
                const event = await this.#settledEvent(recorded.eventId);
                if (event && !FINAL_EVENT_STATES.has(event.status)) finished = false;
                for (const result of event?.results ?? []) {
                    if (result.event === 'ADD') await this.#deleteIfOwn(recorded, await this.jiyi.get(result.id));
                    else if (result.event === 'UPDATE') await this.#revertUpdate(result);
                    else if (result.event === 'DELETE') await this.#restoreDeleted(snapshot, recorded, result);
                }
            }
            // Also whatever carries this turn's keys: covers a lost event id and memories made by a later retry.
            const scope = { user_id: snapshot.userId, agent_id: recorded.agentId, run_id: snapshot.runId };
            const listed = await this.jiyi.list(scope);
            for (const item of listed?.results ?? []) await this.#deleteIfOwn(recorded, item);
            return finished;
        } catch (error) {
            this.log.warn(`[jiyi] could not undo turn ${recorded.stTurn}: ${describe(error)}`);
            return false;
        }
    }

    async #settledEvent(eventId) {
        const started = Date.now();
        for (;;) {
            const event = await this.jiyi.event(eventId);
            if (!event || FINAL_EVENT_STATES.has(event.status)) return event;
            if (Date.now() - started >= this.undoWaitMs) return event;
            await this.sleep(this.pollMs);
        }
    }

    /** Delete a memory if it came from this turn alone; a memory another turn confirmed (its provenance names other
     * messages) stays, since what was said again elsewhere is still true. */
    async #deleteIfOwn(recorded, item) {
        const meta = item?.metadata ?? {};
        if (meta.st_turn !== recorded.stTurn || meta.st_reply_hash !== recorded.hash) return;
        const prefix = provenancePrefix(recorded);
        const others = (item.provenance ?? []).filter(ref => !String(ref.external_id ?? '').startsWith(prefix));
        if (others.length === 0) await this.jiyi.remove(item.id);
    }

    /** A memory this turn's extraction deleted (contradicted) comes back as a new memory with the same text: the
     * REST API has no undelete, so its id, importance and history stay with the deleted one. */
    async #restoreDeleted(snapshot, recorded, result) {
        if (typeof result.memory !== 'string' || !result.memory.trim()) return;
        await this.jiyi.add({
            messages: [{ role: 'user', content: result.memory }],
            user_id: snapshot.userId, agent_id: recorded.agentId, run_id: snapshot.runId,
            metadata: { source: MEMORY_SOURCE, restored_from: result.id },
            infer: false,
        });
    }

    /** Give a memory this turn rewrote its previous text back, unless it has changed again since. */
    async #revertUpdate(result) {
        if (typeof result.previous_memory !== 'string') return;
        const item = await this.jiyi.get(result.id);
        if (item && item.memory === result.memory) await this.jiyi.update(result.id, result.previous_memory);
    }
}

/**
 * The turns to write now, oldest first: those after the newest recorded turn (the latest one, and any a missed save
 * or an unreachable jiyi left behind), and those that replaced a recorded turn in place (a swipe, an edit). A chat
 * with nothing recorded yet (the ledger is new to it) gets its latest turn only, not its whole history.
 */
export function turnsToWrite(turns, claimed, kept, gone) {
    const skip = turn => claimed.has(turn) || PLACEHOLDER_REPLIES.has(turn.replyText.trim());
    const newest = Math.max(-1, ...kept.map(turn => turn.replyIndex));
    const replaced = new Set(gone.map(turn => `${turn.userIndex}:${turn.replyIndex}`));
    let due = turns.filter(turn => !skip(turn)
        && (turn.replyIndex > newest || replaced.has(`${turn.userIndex}:${turn.replyIndex}`)));
    if (kept.length === 0 && gone.length === 0) due = due.slice(-1);
    return due.slice(-MAX_WRITES_PER_SYNC);
}

function findRecorded(turns, recorded, claimed) {
    const same = turn => !claimed.has(turn) && turn.hash === recorded.hash && turn.agentId === recorded.agentId;
    const inPlace = turns.find(turn => turn.replyIndex === recorded.replyIndex && same(turn));
    return inPlace ?? turns.find(same) ?? null;
}

function normalizeState(state) {
    return {
        turns: Array.isArray(state?.turns) ? state.turns : [],
        undo: Array.isArray(state?.undo) ? state.undo : [],
    };
}

/** An error as one line, without request bodies or headers (they may hold chat text or keys). */
export function describe(error) {
    if (!error) return 'unknown error';
    const name = error.name && error.name !== 'Error' ? `${error.name}: ` : '';
    return `${name}${String(error.message ?? error).slice(0, 200)}`;
}

// Memory writes from the browser, for when the server plugin is not there to write on chat save.
//
// After a reply arrives (MESSAGE_RECEIVED) and whenever a message is swiped, edited, deleted or updated, the chat is
// handed to the turn ledger (ledger.js, the same code the plugin runs): it undoes turns that are gone and writes the
// latest turn once. The ledger's record lives in this browser's localStorage, per SillyTavern user and chat.
// When the plugin answers its health check with `writes: true`, this writer does nothing: one writer per chat.

import { TurnLedger } from './ledger.js';

const SYNC_DELAY_MS = 400;  // a swipe or a delete fires several events in a row: sync once they settle
const STORAGE_PREFIX = 'jiyi_memory.ledger';

export class DirectWriter {
    /**
     * @param {object} options
     * @param {import('./transport.js').Transport} options.transport
     * @param {() => object} options.getSettings effective settings
     * @param {() => object} options.getContext SillyTavern.getContext
     * @param {() => string} options.getUserHandle
     */
    constructor({ transport, getSettings, getContext, getUserHandle, storage = globalThis.localStorage }) {
        this.transport = transport;
        this.getSettings = getSettings;
        this.getContext = getContext;
        this.getUserHandle = getUserHandle;
        this.storage = storage;
        this.timer = null;
        this.ledger = new TurnLedger({
            jiyi: transport.directClient(),
            loadState: async key => readJson(this.storage, `${STORAGE_PREFIX}.${key}`),
            saveState: async (key, state) => writeJson(this.storage, `${STORAGE_PREFIX}.${key}`, state),
        });
    }

    /** Sync the current chat soon (events come in bursts). */
    schedule() {
        clearTimeout(this.timer);
        this.timer = setTimeout(() => void this.syncNow(), SYNC_DELAY_MS);
    }

    /** Whether this browser should write: enabled, allowed, and no plugin writing on save. */
    async shouldWrite() {
        const settings = this.getSettings();
        if (!settings.enabled || !settings.writeWithoutPlugin) return false;
        const plugin = await this.transport.pluginState(2000);
        return !(plugin.present && plugin.writes);
    }

    /** Snapshot the chat now and let the ledger sync it. Never rejects. */
    async syncNow() {
        try {
            if (!await this.shouldWrite()) return;
            const found = snapshotOf(this.getContext(), this.getUserHandle());
            if (found) await this.ledger.submit(`${found.snapshot.userId}.${found.chatKey}`, found.snapshot);
        } catch (error) {
            console.warn('[jiyi] memory write skipped:', error?.message ?? error);
        }
    }
}

/** The ledger snapshot of the open chat, copied now (the chat keeps changing while the ledger works). */
export function snapshotOf(context, userId) {
    const runId = context.getCurrentChatId?.();
    if (!runId || !Array.isArray(context.chat)) return null;
    const messages = context.chat.map(m => ({
        is_user: Boolean(m.is_user), is_system: Boolean(m.is_system), mes: m.mes, name: m.name,
        original_avatar: m.original_avatar,
    }));
    if (context.groupId) {
        const group = context.groups?.find(g => String(g.id) === String(context.groupId));
        const members = new Set(group?.members ?? []);
        return {
            chatKey: `group/${runId}`,
            snapshot: {
                userId, runId, groupId: String(context.groupId), messages,
                resolveSpeaker: message => (message.original_avatar && members.has(message.original_avatar)
                    ? { agentId: message.original_avatar, characterName: String(message.name ?? '') }
                    : null),
            },
        };
    }
    const character = context.characters?.[context.characterId];
    if (!character?.avatar) return null;
    const { avatar, name } = character;
    return {
        chatKey: `${avatar}/${runId}`,
        snapshot: { userId, runId, messages, resolveSpeaker: () => ({ agentId: avatar, characterName: name }) },
    };
}

function readJson(storage, key) {
    try {
        return JSON.parse(storage?.getItem(key) ?? 'null');
    } catch {
        return null;
    }
}

function writeJson(storage, key, value) {
    try {
        storage?.setItem(key, JSON.stringify(value));
    } catch (error) {
        // A full localStorage only costs the ledger its memory: a turn may be written twice.
        console.warn('[jiyi] could not keep the memory ledger:', error?.message ?? error);
    }
}

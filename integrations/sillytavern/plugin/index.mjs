// jiyi server plugin for SillyTavern: a same-origin proxy for the extension's memory recall, and memory writes when
// a chat is saved. Install as <SillyTavern>/plugins/jiyi/ with `enableServerPlugins: true` in config.yaml.
//
// Routes (behind SillyTavern's login and CSRF check), under /api/plugins/jiyi/:
//   GET  /health   -> {ok, jiyi: reachable, writes: write-on-save active, version}
//   POST /context  -> jiyi's POST /context, with user_id set to the logged-in user (the browser cannot choose it)
// The API key for jiyi stays here; the browser never sees it.

import { loadConfig } from './config.mjs';
import { JiyiClient, Unreachable } from './jiyi-client.mjs';
import { TurnLedger, describe } from './ledger.js';
import { LedgerFiles } from './ledger-store.mjs';
import { GroupIndex, groupSnapshot, soloSnapshot } from './chat-saves.mjs';
import { hookChatSaves, unhookChatSaves } from './save-hook.mjs';
import { UserSettings } from './user-settings.mjs';

export const info = {
    id: 'jiyi',
    name: 'jiyi Memory',
    description: 'Long-term memory from jiyi: recall proxy for the jiyi Memory extension, and memory writes on chat save.',
};

const VERSION = '0.1.0';

// What the browser may ask of /context. Not user_id (the session decides) and not filters (a filter could name
// another user_id).
const CONTEXT_FIELDS = ['messages', 'agent_id', 'run_id', 'top_k', 'budget_chars', 'rewrite', 'rewrite_prompt',
    'rewritten_query', 'user_name', 'char_name', 'context_messages', 'min_relevance', 'deadline_ms'];

const state = {
    config: null,
    writes: { installed: false, reason: 'not initialised' },
    ledgers: new Map(),  // handle -> TurnLedger
    files: new LedgerFiles(),
    groups: new GroupIndex(),
    userSettings: new UserSettings(),
    handOver: new Map(),  // handle -> promise of the last save handed to its ledger
};

function clientFor(handle, timeoutMs = state.config.writeTimeoutMs) {
    const apiKey = state.config.userApiKeys[handle] ?? state.config.apiKey;
    return new JiyiClient({ url: state.config.url, apiKey, timeoutMs });
}

function ledgerFor(request) {
    const handle = request.user.profile.handle;
    let ledger = state.ledgers.get(handle);
    if (!ledger) {
        ledger = new TurnLedger({ jiyi: clientFor(handle), ...state.files.forUser(request.user.directories.root) });
        state.ledgers.set(handle, ledger);
    }
    return ledger;
}

/** After a successful chat save: hand the chat to the user's ledger, which writes / undoes turns in the background. */
async function onChatSaved(kind, request) {
    try {
        if (!await state.userSettings.memoryEnabled(request.user.directories.root)) return;
        const found = kind === 'group' ? await groupSnapshot(request, state.groups) : soloSnapshot(request);
        if (!found) return;
        // submit never rejects; nobody waits for it.
        void ledgerFor(request).submit(found.chatKey, found.snapshot);
    } catch (error) {
        console.warn(`[jiyi] write-on-save skipped: ${describe(error)}`);
    }
}

async function health(request, response) {
    let reachable = false;
    try {
        await clientFor(request.user.profile.handle).health(state.config.healthTimeoutMs);
        reachable = true;
    } catch {
        reachable = false;
    }
    response.json({ ok: true, jiyi: reachable, writes: state.writes.installed, version: VERSION });
}

async function context(request, response) {
    const body = {};
    for (const field of CONTEXT_FIELDS) {
        if (request.body?.[field] !== undefined) body[field] = request.body[field];
    }
    body.user_id = request.user.profile.handle;
    // The browser gives up at its deadline; give jiyi the same and a little for the way back, within a hard cap.
    const deadline = Number(body.deadline_ms) > 0 ? Number(body.deadline_ms) : 1500;
    const timeoutMs = Math.min(deadline + 250, state.config.contextTimeoutMs);
    const gone = new AbortController();
    response.on('close', () => {
        if (!response.writableFinished) gone.abort();  // the browser stopped waiting
    });
    try {
        const answer = await clientFor(body.user_id, timeoutMs).request('POST', '/context', { body, signal: gone.signal });
        response.status(answer.status).json(answer.data);
    } catch (error) {
        if (gone.signal.aborted) return;
        if (error instanceof Unreachable) {
            response.status(error.timedOut ? 504 : 502).json({ error: error.message, unreachable: true });
        } else {
            response.status(error.status && error.status < 500 ? error.status : 502).json({ error: error.message });
        }
    }
}

/** @param {import('express').Router} router */
export async function init(router) {
    state.config = loadConfig();
    router.get('/health', (request, response) => void health(request, response));
    router.post('/context', (request, response) => void context(request, response));

    state.writes = await hookChatSaves((kind, request) => {
        // Saves are handed over in the order they happened: onChatSaved awaits file reads, and a slower read must
        // not let an older snapshot of a chat overtake a newer one.
        const handle = request.user.profile.handle;
        const queued = (state.handOver.get(handle) ?? Promise.resolve()).then(() => onChatSaved(kind, request));
        state.handOver.set(handle, queued);
    });
    const hasKey = Boolean(state.config.apiKey) || Object.keys(state.config.userApiKeys).length > 0;
    const key = hasKey ? 'with an API key' : 'without an API key';
    console.log(`[jiyi] memory at ${state.config.url} (${key}); write on chat save: ` +
        (state.writes.installed ? 'on' : `OFF (${state.writes.reason}); the extension will write instead`));
}

export async function exit() {
    await unhookChatSaves();
}

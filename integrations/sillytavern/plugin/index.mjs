// jiyi server plugin for SillyTavern: a same-origin proxy for the extension's memory recall, and memory writes when
// a chat is saved. Install as <SillyTavern>/plugins/jiyi/ with `enableServerPlugins: true` in config.yaml.
//
// Routes (behind SillyTavern's login and CSRF check), under /api/plugins/jiyi/:
//   GET  /health   -> {ok, jiyi: reachable and accepting this user, problem (why not), writes: write-on-save
//                      active, version, url (jiyi), consoleUrl (jiyi's console, for links in the browser)}
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

/** Whether jiyi answers, and takes this user's key: `problem` names the part that failed (the extension's
 * status.js words it). */
async function health(request, response) {
    const handle = request.user.profile.handle;
    const client = clientFor(handle, state.config.healthTimeoutMs);
    let problem = null;
    try {
        await client.health(state.config.healthTimeoutMs);
        // /health is open; a memory route tells whether jiyi accepts this user with the key configured here.
        await client.request('GET', `/memories?${new URLSearchParams({ user_id: handle, limit: '1' })}`);
    } catch (error) {
        problem = problemOf(error);
    }
    response.json({
        ok: true, jiyi: problem === null, problem, writes: state.writes.installed, version: VERSION,
        url: state.config.url, consoleUrl: state.config.consoleUrl || state.config.url,
    });
}

/** What failed, as the extension's status.js names it. */
function problemOf(error) {
    if (error instanceof Unreachable) {
        return error.timedOut
            ? { kind: 'timeout', via: 'plugin', url: state.config.url, ms: error.timeoutMs }
            : { kind: 'unreachable', via: 'plugin', url: state.config.url, detail: error.message };
    }
    if (error.status === 401 || error.status === 403) return { kind: 'auth', status: error.status };
    return { kind: 'jiyi_error', status: error.status, detail: String(error.message ?? error).slice(0, 200) };
}

async function context(request, response) {
    const body = {};
    for (const field of CONTEXT_FIELDS) {
        if (request.body?.[field] !== undefined) body[field] = request.body[field];
    }
    body.user_id = request.user.profile.handle;
    // jiyi answers by deadline_ms (it stops its own search then); the browser gives up 100 ms after that. Waiting
    // 50 ms past deadline_ms lets a frozen jiyi be reported as such (504, timeout) before the browser stops
    // listening. Within a hard cap.
    const deadline = Number(body.deadline_ms) > 0 ? Number(body.deadline_ms) : 1500;
    const timeoutMs = Math.min(deadline + 50, state.config.contextTimeoutMs);
    const gone = new AbortController();
    response.on('close', () => {
        if (!response.writableFinished) gone.abort();  // the browser stopped waiting
    });
    try {
        const answer = await clientFor(body.user_id, timeoutMs).request('POST', '/context', { body, signal: gone.signal });
        if (answer.status === 404) {
            response.status(502).json({
                error: `${state.config.url} has no POST /context: is it jiyi?`, kind: 'jiyi_error',
            });
            return;
        }
        response.status(answer.status).json(answer.data);
    } catch (error) {
        if (gone.signal.aborted) return;
        const problem = problemOf(error);
        const status = error instanceof Unreachable ? (error.timedOut ? 504 : 502)
            : (error.status && error.status < 500 ? error.status : 502);
        response.status(status).json({
            error: error.message, ...problem,
            unreachable: problem.kind === 'unreachable' || problem.kind === 'timeout',
            timedOut: problem.kind === 'timeout',
        });
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

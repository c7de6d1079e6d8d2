// What the panel's status line and the notes on replies say, from the transport's state and the recall records.
// Pure functions of their arguments (no DOM, no SillyTavern), so they are unit-tested in node.
//
// A problem names the part that failed, so the text blames the right one:
//   plugin_missing  the server plugin did not answer (not installed, or server plugins off)
//   unreachable     jiyi refused or could not be connected to (from SillyTavern's server, or from this browser)
//   timeout         jiyi (through the plugin or directly) took the call and did not answer in time: busy or frozen
//   auth            jiyi answered 401/403: the API key is missing or wrong
//   jiyi_error      jiyi answered with another error
//   degraded        jiyi answered, but could not search (its embedder or store failed)

export const PROBLEM_KINDS = ['plugin_missing', 'unreachable', 'timeout', 'auth', 'jiyi_error', 'degraded'];

/** The sentence for a problem {kind, via, url, ms, status, detail}. */
export function problemText(problem, t) {
    switch (problem?.kind) {
        case 'plugin_missing':
            return t('problem.plugin_missing');
        case 'unreachable':
            return t(problem.via === 'plugin' ? 'problem.unreachable_plugin' : 'problem.unreachable_direct',
                { url: problem.url || 'jiyi' });
        case 'timeout':
            return t('problem.timeout', { ms: Math.round(Number(problem.ms) || 0) });
        case 'auth':
            return t('problem.auth', { status: problem.status ?? 401 });
        case 'degraded':
            return t('problem.degraded', { detail: problem.detail || '?' });
        default:
            return t('problem.jiyi_error', { detail: problem?.detail || '?' });
    }
}

/** Whether turns missed now are caught up later: every problem that stops writes too (not a search failure). */
export function stopsWrites(problem) {
    return Boolean(problem) && problem.kind !== 'degraded';
}

/**
 * What the panel's URL field shows: the address requests actually go to. Through the server plugin that is the
 * plugin's own (its config.json or JIYI_URL), so the field shows it, read-only, with a hint saying where it is set;
 * the browser's own address (serviceUrl) is kept for the direct route and shown, editable, when that is the route.
 * @returns {{value: string, readOnly: boolean, title: string}}
 */
export function urlField({ settings, plugin }, t) {
    const viaPlugin = settings.transport === 'plugin' || (settings.transport === 'auto' && plugin.present);
    if (viaPlugin && plugin.url) return { value: plugin.url, readOnly: true, title: t('url.from_plugin') };
    return { value: settings.serviceUrl, readOnly: false, title: t('url.direct') };
}

/**
 * The status line: the route in use, whether jiyi answers (or which part does not), who writes memories, and what
 * the last reply got.
 * @param {object} state
 * @param {object} state.settings effective settings
 * @param {object} state.plugin the transport's plugin state {present, jiyi, writes, problem, url}
 * @param {object|null} state.direct the last direct probe {ok, problem} (null: not probed)
 * @param {object|null} state.last the last recall record
 * @param {Function} t translator
 */
export function describeStatus({ settings, plugin, direct, last }, t) {
    if (!settings.enabled) return t('status.off');
    if (plugin.present === null && settings.transport !== 'direct') return t('status.checking');
    const parts = [];
    const viaPlugin = settings.transport === 'plugin' || (settings.transport === 'auto' && plugin.present);
    let problem = null;
    let writer;
    if (viaPlugin) {
        parts.push(t('status.via_plugin', { url: plugin.url || settings.serviceUrl }));
        if (!plugin.present) problem = { kind: 'plugin_missing' };
        else if (!plugin.jiyi) problem = plugin.problem ?? { kind: 'unreachable', via: 'plugin', url: plugin.url };
        writer = plugin.present && plugin.writes ? 'plugin' : (settings.writeWithoutPlugin ? 'browser' : null);
    } else {
        parts.push(t(settings.transport === 'auto' ? 'status.direct_no_plugin' : 'status.direct',
            { url: settings.serviceUrl }));
        if (direct && !direct.ok) problem = direct.problem;
        writer = plugin.present && plugin.writes ? 'plugin' : (settings.writeWithoutPlugin ? 'browser' : null);
    }
    if (problem) parts.push(capitalize(problemText(problem, t)));
    else if (viaPlugin || direct?.ok) parts.push(t('status.reachable'));
    parts.push(t(writer === 'plugin' ? 'status.writes_plugin'
        : writer === 'browser' ? 'status.writes_browser' : 'status.writes_none'));
    const lastProblem = last && !last.skipped ? last.problem : null;
    if (writer && (stopsWrites(problem) || stopsWrites(lastProblem))) {
        parts.push(t(writer === 'plugin' ? 'status.catch_up_save' : 'status.catch_up_reply'));
    }
    const lastText = describeLast(last, t);
    if (lastText) parts.push(lastText);
    // Sentences are joined by a space, which Chinese does not put after its full stops.
    return parts.join(' ').replace(/([。！？）])\s+/g, '$1');
}

/** One sentence about the last recall. */
export function describeLast(record, t) {
    if (!record) return '';
    const ms = Math.round(Number(record.addedMs) || 0);
    if (record.skipped) return t('status.last_skipped', { reason: skipReason(record, t) });
    if (record.problem) return t('status.last_problem', { problem: problemText(record.problem, t) });
    const count = record.injected?.length ?? record.injectedIds?.length ?? 0;
    if (count === 0) return t('status.last_none', { ms });
    return count === 1 ? t('status.last_used_one', { ms }) : t('status.last_used', { count, ms });
}

function skipReason(record, t) {
    switch (record.reason) {
        case 'off':
            return t('skip.off');
        case 'no user message':
            return t('skip.no_user_message');
        case 'no character selected':
            return t('skip.no_character');
        case 'type':
            return t('skip.type', { type: record.type });
        default:
            return record.reason || record.error || String(record.type);
    }
}

function capitalize(text) {
    return text ? text[0].toUpperCase() + text.slice(1) : text;
}

// --- links to jiyi's console (served by jiyi at /ui, stable URLs) ---

/** The console page of one user, narrowed to one character (agent) when given. */
export function consoleScopeUrl(base, userId, agentId) {
    const url = `${trimBase(base)}/ui/users/${encodeURIComponent(userId)}`;
    return agentId ? `${url}?${new URLSearchParams({ agent_id: agentId })}` : url;
}

/** The console page of one memory (its text, history and why it was remembered). */
export function consoleMemoryUrl(base, memoryId) {
    return `${trimBase(base)}/ui/memories/${encodeURIComponent(memoryId)}`;
}

function trimBase(base) {
    return String(base ?? '').trim().replace(/\/+$/, '');
}

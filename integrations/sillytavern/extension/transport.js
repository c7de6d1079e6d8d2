// How the extension reaches jiyi: through the server plugin (same origin, SillyTavern's session decides the user,
// the API key stays on the server) when it is installed, else straight to jiyi's URL (jiyi must allow this origin:
// JIYI_CORS_ORIGINS).

const PLUGIN_BASE = '/api/plugins/jiyi';
const PROBE_EVERY_MS = 60_000;  // the plugin's presence is re-checked in the background this often

/** jiyi (or the plugin in front of it) did not answer: the rest of this turn's recall is skipped. `problem` says
 * which part failed (status.js): plugin_missing, unreachable or timeout. */
export class Unreachable extends Error {
    constructor(message, problem = { kind: 'unreachable' }) {
        super(message);
        this.name = 'Unreachable';
        this.problem = problem;
    }
}

/** jiyi answered, with an error (`problem.kind` auth for 401/403, else jiyi_error). */
export class JiyiHttpError extends Error {
    constructor(status, message, problem = null) {
        super(`HTTP ${status}${message ? `: ${message}` : ''}`);
        this.name = 'JiyiHttpError';
        this.status = status;
        this.problem = problem ?? (status === 401 || status === 403
            ? { kind: 'auth', status }
            : { kind: 'jiyi_error', status, detail: this.message });
    }
}

export class Transport {
    /**
     * @param {object} options
     * @param {() => object} options.getSettings effective settings (settings.js)
     * @param {() => object} options.getRequestHeaders SillyTavern's headers (CSRF token) for its own server
     * @param {() => string} options.getUserHandle the logged-in SillyTavern user, for direct calls
     */
    constructor({ getSettings, getRequestHeaders, getUserHandle }) {
        this.getSettings = getSettings;
        this.getRequestHeaders = getRequestHeaders;
        this.getUserHandle = getUserHandle;
        // present: null = not asked yet; jiyi: the plugin reached jiyi (else `problem` says why); writes: the plugin
        // writes on chat save; url / consoleUrl: where the plugin reaches jiyi, and where a browser opens its console
        this.plugin = {
            present: null, jiyi: false, writes: false, problem: null, url: '', consoleUrl: '', checkedAt: 0,
        };
        // The last check of jiyi straight from this browser (direct route): {ok, problem}; null before the first.
        this.direct = null;
        this.probing = null;
    }

    /** Ask the plugin's health route (once at a time). Never rejects. */
    probePlugin(timeoutMs = 3000) {
        this.probing ??= (async () => {
            try {
                const response = await fetch(`${PLUGIN_BASE}/health`, {
                    headers: this.getRequestHeaders(), signal: AbortSignal.timeout(timeoutMs), cache: 'no-store',
                });
                const data = response.ok ? await response.json().catch(() => null) : null;
                this.plugin = {
                    present: Boolean(data?.ok), jiyi: Boolean(data?.jiyi), writes: Boolean(data?.writes),
                    problem: data?.ok && !data.jiyi ? (data.problem ?? { kind: 'unreachable', via: 'plugin' }) : null,
                    url: String(data?.url ?? ''), consoleUrl: String(data?.consoleUrl ?? data?.url ?? ''),
                    checkedAt: Date.now(),
                };
                if (this.plugin.problem) {
                    this.plugin.problem = { via: 'plugin', url: this.plugin.url, ...this.plugin.problem };
                }
            } catch {
                // Not answering in time counts as absent now; asked again later.
                this.plugin = { ...this.plugin, present: false, jiyi: false, writes: false, problem: null,
                    checkedAt: Date.now() };
            } finally {
                this.probing = null;
            }
            return this.plugin;
        })();
        return this.probing;
    }

    /** Check jiyi straight from this browser: up (GET /health) and willing to serve this user without a key. Never
     * rejects. */
    async probeDirect(timeoutMs = 2000) {
        const user = encodeURIComponent(this.getUserHandle());
        try {
            await this.#call(`${this.getSettings().serviceUrl}/health`, { signal: AbortSignal.timeout(timeoutMs) });
            await this.#call(`${this.getSettings().serviceUrl}/memories?user_id=${user}&limit=1`,
                { signal: AbortSignal.timeout(timeoutMs) });
            this.direct = { ok: true, problem: null };
        } catch (error) {
            this.direct = { ok: false, problem: error.problem ?? { kind: 'unreachable', via: 'direct' } };
        }
        return this.direct;
    }

    /** The plugin's state, probing first when it was never asked (bounded by `timeoutMs`); refreshed in the
     * background when old. */
    async pluginState(timeoutMs) {
        if (this.plugin.present === null) {
            await Promise.race([this.probePlugin(), new Promise(resolve => setTimeout(resolve, timeoutMs))]);
        } else if (Date.now() - this.plugin.checkedAt > PROBE_EVERY_MS) {
            void this.probePlugin();
        }
        return this.plugin;
    }

    /** 'plugin' or 'direct' for the next call, as the settings and the plugin's presence say. */
    async choose(timeoutMs) {
        const { transport } = this.getSettings();
        if (transport === 'plugin' || transport === 'direct') return transport;
        return (await this.pluginState(timeoutMs)).present ? 'plugin' : 'direct';
    }

    /** Where a browser opens jiyi's console: the plugin's jiyi when it is in use, else the URL in the settings. */
    consoleBase() {
        const { transport, serviceUrl } = this.getSettings();
        const viaPlugin = transport === 'plugin' || (transport === 'auto' && this.plugin.present);
        return (viaPlugin && this.plugin.consoleUrl) || serviceUrl;
    }

    /** POST /context through `via`; the parsed answer. Rejects with Unreachable or JiyiHttpError. */
    async context(via, body, signal) {
        if (via === 'plugin') {
            return this.#call(`${PLUGIN_BASE}/context`, { method: 'POST', body, signal, sameOrigin: true });
        }
        return this.#call(`${this.getSettings().serviceUrl}/context`, {
            method: 'POST', body: { ...body, user_id: this.getUserHandle() }, signal,
        });
    }

    /** A client for the turn ledger (ledger.js), straight to jiyi, for when no plugin writes. */
    directClient(timeoutMs = 2000) {
        const base = () => this.getSettings().serviceUrl;
        const call = (path, options = {}) => this.#call(base() + path, {
            ...options, signal: AbortSignal.timeout(timeoutMs), notFoundIsNull: true,
        });
        const id = value => encodeURIComponent(value);
        return {
            add: body => call('/memories', { method: 'POST', body }),
            event: eventId => call(`/events/${id(eventId)}`),
            get: memoryId => call(`/memories/${id(memoryId)}`),
            update: (memoryId, text) => call(`/memories/${id(memoryId)}`, { method: 'PUT', body: { text } }),
            remove: memoryId => call(`/memories/${id(memoryId)}`, { method: 'DELETE' }),
            // The messages kept as evidence too: undoing a turn takes its words out of recall, not only its facts.
            list: ({ user_id, agent_id, run_id }) => call(`/memories?${new URLSearchParams({
                user_id, agent_id, run_id, limit: '1000', include_messages: 'true' })}`),
        };
    }

    async #call(url, { method = 'GET', body, signal, sameOrigin = false, notFoundIsNull = false }) {
        const via = sameOrigin ? 'plugin' : 'direct';
        const jiyiUrl = sameOrigin ? this.plugin.url : this.getSettings().serviceUrl;
        const headers = sameOrigin ? { ...this.getRequestHeaders() } : { accept: 'application/json' };
        if (body !== undefined) headers['Content-Type'] = 'application/json';
        let response;
        try {
            response = await fetch(url, {
                method, headers, signal, cache: 'no-store',
                body: body === undefined ? undefined : JSON.stringify(body),
                // Direct calls go to another origin: no SillyTavern cookies there.
                credentials: sameOrigin ? 'same-origin' : 'omit',
            });
        } catch (error) {
            // Our own deadline: jiyi (or the plugin waiting for it) took the call and did not answer in time.
            if (signal?.aborted) {
                throw new Unreachable('no answer before the deadline', { kind: 'timeout', via, url: jiyiUrl });
            }
            // A refused connection and a CORS refusal both land here; the browser does not tell them apart. Through
            // the plugin, it is SillyTavern's own server that did not answer.
            if (sameOrigin) {
                throw new Unreachable(`SillyTavern's server did not answer (${error.message})`, { kind: 'plugin_missing' });
            }
            throw new Unreachable(`jiyi unreachable (${error.message})`, { kind: 'unreachable', via, url: jiyiUrl });
        }
        const data = await response.json().catch(() => null);
        if (response.ok) return data;
        if (notFoundIsNull && response.status === 404) return null;
        if (sameOrigin && !data?.kind && (response.status === 404 || response.status === 405)) {
            // SillyTavern itself answered: no plugin route here (not installed, or server plugins are off).
            throw new Unreachable(`no server plugin (HTTP ${response.status})`, { kind: 'plugin_missing' });
        }
        // The plugin says what failed behind it: jiyi unreachable, too slow, refusing the key.
        if (data?.kind === 'unreachable' || data?.kind === 'timeout' || data?.unreachable) {
            const kind = data.kind ?? (data.timedOut ? 'timeout' : 'unreachable');
            throw new Unreachable(data.error ?? `jiyi ${kind} (HTTP ${response.status})`,
                { kind, via, url: data.url || jiyiUrl, ms: data.ms });
        }
        const detail = String(typeof data?.detail === 'string' ? data.detail : (data?.error ?? '')).slice(0, 200);
        throw new JiyiHttpError(response.status, detail);
    }
}

// How the extension reaches jiyi: through the server plugin (same origin, SillyTavern's session decides the user,
// the API key stays on the server) when it is installed, else straight to jiyi's URL (jiyi must allow this origin:
// JIYI_CORS_ORIGINS).

const PLUGIN_BASE = '/api/plugins/jiyi';
const PROBE_EVERY_MS = 60_000;  // the plugin's presence is re-checked in the background this often

/** jiyi (or the plugin in front of it) could not be reached in time: the rest of this turn's recall is skipped. */
export class Unreachable extends Error {
    constructor(message) {
        super(message);
        this.name = 'Unreachable';
    }
}

/** jiyi answered, with an error. */
export class JiyiHttpError extends Error {
    constructor(status, message) {
        super(`HTTP ${status}${message ? `: ${message}` : ''}`);
        this.name = 'JiyiHttpError';
        this.status = status;
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
        // present: null = not asked yet; jiyi: the plugin reached jiyi; writes: the plugin writes on chat save
        this.plugin = { present: null, jiyi: false, writes: false, checkedAt: 0 };
        this.probing = null;
    }

    /** Ask the plugin's health route (once at a time). Never rejects. */
    probePlugin(timeoutMs = 1500) {
        this.probing ??= (async () => {
            try {
                const response = await fetch(`${PLUGIN_BASE}/health`, {
                    headers: this.getRequestHeaders(), signal: AbortSignal.timeout(timeoutMs), cache: 'no-store',
                });
                const data = response.ok ? await response.json().catch(() => null) : null;
                this.plugin = {
                    present: Boolean(data?.ok), jiyi: Boolean(data?.jiyi), writes: Boolean(data?.writes),
                    checkedAt: Date.now(),
                };
            } catch {
                // Not answering in time counts as absent now; asked again later.
                this.plugin = { present: false, jiyi: false, writes: false, checkedAt: Date.now() };
            } finally {
                this.probing = null;
            }
            return this.plugin;
        })();
        return this.probing;
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
            list: ({ user_id, agent_id, run_id }) =>
                call(`/memories?${new URLSearchParams({ user_id, agent_id, run_id, limit: '1000' })}`),
        };
    }

    async #call(url, { method = 'GET', body, signal, sameOrigin = false, notFoundIsNull = false }) {
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
            // A refused connection, a CORS refusal and an abort all land here; the browser does not tell them apart.
            const why = signal?.aborted ? 'deadline reached' : error.message;
            throw new Unreachable(`${sameOrigin ? 'plugin' : 'jiyi'} unreachable (${why})`);
        }
        const data = await response.json().catch(() => null);
        if (response.ok) return data;
        if (notFoundIsNull && response.status === 404) return null;
        // The plugin says 502/504 with `unreachable` when it could not reach jiyi.
        if (data?.unreachable) throw new Unreachable(data.error ?? `jiyi unreachable (HTTP ${response.status})`);
        const detail = typeof data?.detail === 'string' ? data.detail : (data?.error ?? '');
        throw new JiyiHttpError(response.status, String(detail).slice(0, 200));
    }
}

// A small HTTP client for jiyi's REST API, used by the plugin only (the API key never leaves the server).

/** jiyi could not be reached: connection refused, DNS, or no answer in time. The caller skips what depended on it. */
export class Unreachable extends Error {
    constructor(message, { timedOut = false, timeoutMs = 0 } = {}) {
        super(message);
        this.name = 'Unreachable';
        this.timedOut = timedOut;
        this.timeoutMs = timeoutMs;
    }
}

/** jiyi answered with an error status. */
export class JiyiError extends Error {
    constructor(status, detail) {
        super(`jiyi answered ${status}${detail ? `: ${detail}` : ''}`);
        this.name = 'JiyiError';
        this.status = status;
    }
}

export class JiyiClient {
    /** @param {{url: string, apiKey?: string, timeoutMs: number}} options */
    constructor({ url, apiKey = '', timeoutMs }) {
        this.url = url;
        this.apiKey = apiKey;
        this.timeoutMs = timeoutMs;
    }

    /**
     * One request. Resolves with {status, data}; a 404 resolves too (data null) because "already gone" is an answer.
     * Rejects with Unreachable or JiyiError.
     */
    async request(method, path, { body, timeoutMs = this.timeoutMs, signal } = {}) {
        const headers = { accept: 'application/json' };
        if (body !== undefined) headers['content-type'] = 'application/json';
        if (this.apiKey) headers.authorization = `Token ${this.apiKey}`;
        const timeout = AbortSignal.timeout(timeoutMs);
        let response;
        try {
            response = await fetch(this.url + path, {
                method, headers,
                body: body === undefined ? undefined : JSON.stringify(body),
                signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
            });
        } catch (error) {
            const timedOut = timeout.aborted;
            // fetch's own message is "fetch failed"; the reason (ECONNREFUSED, ...) is in error.cause.
            const reason = timedOut ? `no answer within ${timeoutMs} ms` : (error.cause?.code ?? error.message);
            throw new Unreachable(`jiyi at ${this.url} unreachable (${reason})`, { timedOut, timeoutMs });
        }
        let data = null;
        try {
            data = await response.json();
        } catch {
            data = null;
        }
        if (response.status === 404) return { status: 404, data: null };
        if (!response.ok) throw new JiyiError(response.status, typeof data?.detail === 'string' ? data.detail : '');
        return { status: response.status, data };
    }

    async health(timeoutMs) {
        return (await this.request('GET', '/health', { timeoutMs })).data;
    }

    // --- what the turn ledger needs (ledger.js) ---
    async add(body) {
        return (await this.request('POST', '/memories', { body })).data;
    }

    async event(id) {
        return (await this.request('GET', `/events/${encodeURIComponent(id)}`)).data;
    }

    async get(id) {
        return (await this.request('GET', `/memories/${encodeURIComponent(id)}`)).data;
    }

    async update(id, text) {
        return (await this.request('PUT', `/memories/${encodeURIComponent(id)}`, { body: { text } })).data;
    }

    async remove(id) {
        return (await this.request('DELETE', `/memories/${encodeURIComponent(id)}`)).data;
    }

    async list({ user_id, agent_id, run_id }) {
        // The messages kept as evidence too: undoing a turn takes its words out of recall, not only its facts.
        const query = new URLSearchParams({ user_id, agent_id, run_id, limit: '1000', include_messages: 'true' });
        return (await this.request('GET', `/memories?${query}`)).data;
    }
}

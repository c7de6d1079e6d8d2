// Where jiyi is and how to reach it. Read once when SillyTavern loads the plugin: the environment wins over
// <plugin folder>/config.json, which wins over the defaults.

import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEFAULTS = Object.freeze({
    url: 'http://127.0.0.1:8888',
    // Where a user's browser opens jiyi's console (/ui), when it is not `url` (jiyi behind a proxy, in a container).
    consoleUrl: '',
    apiKey: '',
    // Per SillyTavern user, for a jiyi that binds each API key to one user (JIYI_API_KEYS): {"<handle>": "<key>"}.
    userApiKeys: {},
    writeTimeoutMs: 2000,
    healthTimeoutMs: 1000,
    // Upper bound for one proxied /context call, whatever deadline the browser asks for.
    contextTimeoutMs: 10000,
});

const here = path.dirname(fileURLToPath(import.meta.url));

/** The plugin's settings; `source` says where each came from (logged at start, without the key itself). */
export function loadConfig({ env = process.env, file = path.join(here, 'config.json') } = {}) {
    let fromFile = {};
    try {
        if (fs.existsSync(file)) fromFile = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (error) {
        console.warn(`[jiyi] ignoring ${file}: ${error.message}`);
    }
    const config = { ...DEFAULTS, ...pick(fromFile, Object.keys(DEFAULTS)) };
    if (env.JIYI_URL) config.url = env.JIYI_URL;
    if (env.JIYI_API_KEY) config.apiKey = env.JIYI_API_KEY;
    if (env.JIYI_CONSOLE_URL) config.consoleUrl = env.JIYI_CONSOLE_URL;
    if (env.JIYI_WRITE_TIMEOUT_MS) config.writeTimeoutMs = Number(env.JIYI_WRITE_TIMEOUT_MS);
    config.url = String(config.url).replace(/\/+$/, '');
    config.consoleUrl = String(config.consoleUrl ?? '').replace(/\/+$/, '');
    for (const key of ['writeTimeoutMs', 'healthTimeoutMs', 'contextTimeoutMs']) {
        const value = Number(config[key]);
        config[key] = Number.isFinite(value) && value > 0 ? value : DEFAULTS[key];
    }
    if (typeof config.userApiKeys !== 'object' || config.userApiKeys === null) config.userApiKeys = {};
    return config;
}

function pick(object, keys) {
    return Object.fromEntries(Object.entries(object ?? {}).filter(([key]) => keys.includes(key)));
}

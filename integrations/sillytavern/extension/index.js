// jiyi Memory for SillyTavern: long-term memory recalled before each reply and written as the chat goes on.
//
// - Recall: the generate interceptor (manifest.json) asks jiyi for the memory block of this conversation and
//   injects it as a system prompt right after the main prompt (IN_PROMPT, SYSTEM): a stable place that does not
//   disturb the chat history or prompt caching. One deadline covers it all; the reply is never blocked or aborted.
// - Write: the server plugin writes on chat save when installed; otherwise this extension writes (writer.js).
// - Test hook: globalThis.jiyiMemory.last / .history describe the last interceptions (CONTRACT.md).

import { getCurrentUserHandle } from '../../../user.js';
import { DEFAULT_REWRITE_PROMPT, effectiveSettings, loadSettings } from './settings.js';
import { Transport } from './transport.js';
import { Deadline, recall } from './recall.js';
import { DirectWriter } from './writer.js';

const PROMPT_KEY = 'jiyi_memory';
// SillyTavern's extension_prompt_types.IN_PROMPT and extension_prompt_roles.SYSTEM (public/script.js, 1.19.0);
// written out to avoid importing script.js's internals for two numbers.
const IN_PROMPT = 0;
const SYSTEM_ROLE = 0;
const SKIPPED_TYPES = new Set(['quiet', 'impersonate']);  // background prompts and the user's own voice
const HISTORY_LIMIT = 50;

// 'third-party/jiyi-memory' (or whatever folder the extension was installed in), for its settings template.
const EXTENSION_PATH = new URL('.', import.meta.url).pathname
    .replace(/^.*\/scripts\/extensions\//, '').replace(/\/$/, '');

const context = () => globalThis.SillyTavern.getContext();
const currentSettings = () => effectiveSettings(loadSettings(context().extensionSettings));
const userHandle = () => {
    try {
        return getCurrentUserHandle();
    } catch {
        return 'default-user';
    }
};

const transport = new Transport({
    getSettings: currentSettings,
    getRequestHeaders: () => context().getRequestHeaders(),
    getUserHandle: userHandle,
});
const writer = new DirectWriter({
    transport, getSettings: currentSettings, getContext: context, getUserHandle: userHandle,
});

const hook = { last: null, history: [], transport, writer, settings: currentSettings };
globalThis.jiyiMemory = hook;

function setMemoryPrompt(text) {
    context().setExtensionPrompt(PROMPT_KEY, text, IN_PROMPT, 0, false, SYSTEM_ROLE);
}

function remember(record) {
    hook.last = record;
    hook.history.push(record);
    if (hook.history.length > HISTORY_LIMIT) hook.history.splice(0, hook.history.length - HISTORY_LIMIT);
    renderStatus();
}

/**
 * SillyTavern awaits this before building each prompt (not for dry runs). It must never throw and never call
 * `abort`: without memories the reply still goes ahead.
 */
globalThis.jiyiMemoryInterceptor = async function jiyiMemoryInterceptor(chat, _contextSize, _abort, type) {
    const started = performance.now();
    let record = { type, skipped: true, transport: null, addedMs: 0, injectedIds: [], stages: [], degraded: false,
        error: null, block: '' };
    let deadline = null;
    try {
        // First of all: a block from an earlier reply must never leak into this one, whatever happens next.
        setMemoryPrompt('');
        const settings = currentSettings();
        if (!settings.enabled || SKIPPED_TYPES.has(type)) {
            record.reason = settings.enabled ? `${type} generation` : 'memory is off';
            return;
        }
        deadline = new Deadline(settings.deadlineMs);
        const found = await recall({ chat, settings, transport, context: context(), deadline });
        record = { ...record, skipped: false, ...found.record, block: found.block };
        if (found.block) setMemoryPrompt(found.block);
    } catch (error) {
        record.error = String(error?.message ?? error).slice(0, 300);
    } finally {
        deadline?.dispose();
        record.addedMs = Math.round((performance.now() - started) * 10) / 10;
        record.at = Date.now();
        remember(record);
    }
};

// --- settings panel --------------------------------------------------------------------------------------------

const FIELDS = [
    // [element id, setting, kind]
    ['#jiyi_memory_enabled', 'enabled', 'checkbox'],
    ['#jiyi_memory_rewrite', 'rewrite', 'checkbox'],
    ['#jiyi_memory_rewrite_source', 'rewriteSource', 'text'],
    ['#jiyi_memory_rewrite_prompt', 'rewritePrompt', 'text'],
    ['#jiyi_memory_url', 'serviceUrl', 'text'],
    ['#jiyi_memory_transport', 'transport', 'text'],
    ['#jiyi_memory_top_k', 'topK', 'number'],
    ['#jiyi_memory_budget', 'budgetChars', 'number'],
    ['#jiyi_memory_deadline', 'deadlineMs', 'number'],
    ['#jiyi_memory_context_messages', 'contextMessages', 'number'],
    ['#jiyi_memory_write_without_plugin', 'writeWithoutPlugin', 'checkbox'],
];

function fillForm() {
    const settings = loadSettings(context().extensionSettings);
    for (const [selector, key, kind] of FIELDS) {
        const element = document.querySelector(selector);
        if (!element) continue;
        // Values are set here, not in the template: the template goes through Handlebars, which would eat any
        // {{...}} in a user's prompt.
        if (kind === 'checkbox') element.checked = Boolean(settings[key]);
        else element.value = String(settings[key] ?? '');
    }
    toggleRewriteFields();
}

function onFieldChange(event) {
    const field = FIELDS.find(([selector]) => event.target.matches(selector));
    if (!field) return;
    const [, key, kind] = field;
    const settings = loadSettings(context().extensionSettings);
    if (kind === 'checkbox') settings[key] = event.target.checked;
    else if (kind === 'number') settings[key] = Number(event.target.value);
    else settings[key] = event.target.value;
    context().saveSettingsDebounced();
    toggleRewriteFields();
    if (key === 'transport' || key === 'serviceUrl' || key === 'enabled') void refreshConnection();
}

function toggleRewriteFields() {
    const rewrite = document.querySelector('#jiyi_memory_rewrite')?.checked;
    document.querySelector('#jiyi_memory_rewrite_fields')?.classList.toggle('jiyi-memory-dim', !rewrite);
}

async function refreshConnection() {
    await transport.probePlugin();
    renderStatus();
}

function describeConnection() {
    const settings = currentSettings();
    if (!settings.enabled) return 'Off.';
    const plugin = transport.plugin;
    if (plugin.present === null) return 'Checking the connection…';
    const usePlugin = settings.transport === 'plugin' || (settings.transport === 'auto' && plugin.present);
    if (usePlugin) {
        const reach = plugin.present ? (plugin.jiyi ? 'jiyi reachable' : 'jiyi NOT reachable') : 'plugin NOT answering';
        return `Via the server plugin (${reach}); memories are written ${plugin.writes ? 'by the plugin on chat save' : 'by this browser'}.`;
    }
    const writes = settings.writeWithoutPlugin && !(plugin.present && plugin.writes) ? 'by this browser' : 'not by this browser';
    return `Direct to ${settings.serviceUrl} (jiyi must allow this origin: JIYI_CORS_ORIGINS); memories are written ${writes}.`;
}

function describeLast(record) {
    if (!record) return '';
    if (record.skipped) return `Last reply: skipped (${record.reason ?? record.error ?? record.type}).`;
    const count = record.injectedIds.length;
    const what = record.error ? `no memories (${record.error})` : `${count} ${count === 1 ? 'memory' : 'memories'}`;
    return `Last reply: ${what}, ${Math.round(record.addedMs)} ms.`;
}

function renderStatus() {
    const element = document.querySelector('#jiyi_memory_status');
    if (element) element.textContent = [describeConnection(), describeLast(hook.last)].filter(Boolean).join(' ');
}

async function mountSettings() {
    const html = await context().renderExtensionTemplateAsync(EXTENSION_PATH, 'settings');
    const container = document.querySelector('#extensions_settings2') ?? document.querySelector('#extensions_settings');
    container.insertAdjacentHTML('beforeend', html);
    const panel = document.querySelector('#jiyi_memory_settings');
    panel.addEventListener('input', onFieldChange);
    panel.addEventListener('change', onFieldChange);
    panel.querySelector('#jiyi_memory_rewrite_reset')?.addEventListener('click', () => {
        loadSettings(context().extensionSettings).rewritePrompt = DEFAULT_REWRITE_PROMPT;
        context().saveSettingsDebounced();
        fillForm();
    });
    panel.querySelector('#jiyi_memory_check')?.addEventListener('click', () => void refreshConnection());
    fillForm();
    renderStatus();
}

// --- events ----------------------------------------------------------------------------------------------------

function listen() {
    const { eventSource, eventTypes } = context();
    // Writes without the plugin: a finished reply, and every change that can make an earlier turn stale.
    for (const name of ['MESSAGE_RECEIVED', 'MESSAGE_SWIPED', 'MESSAGE_EDITED', 'MESSAGE_DELETED', 'MESSAGE_UPDATED',
        'MESSAGE_SWIPE_DELETED']) {
        if (eventTypes[name]) eventSource.on(eventTypes[name], () => writer.schedule());
    }
    // A block recalled for another chat must not show up in this chat's dry runs (token counts, prompt view).
    eventSource.on(eventTypes.CHAT_CHANGED, () => setMemoryPrompt(''));
}

async function start() {
    loadSettings(context().extensionSettings);
    listen();
    try {
        await mountSettings();
    } catch (error) {
        console.error('[jiyi] could not show the settings panel', error);
    }
    await refreshConnection();
}

// Module scripts run after the document is parsed; SillyTavern loads extensions once its own UI is up.
void start();

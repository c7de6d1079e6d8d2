// jiyi Memory for SillyTavern: long-term memory recalled before each reply and written as the chat goes on.
//
// - Recall: the generate interceptor (manifest.json) asks jiyi for the memory block of this conversation and
//   injects it as a system prompt right after the main prompt (IN_PROMPT, SYSTEM): a stable place that does not
//   disturb the chat history or prompt caching. One deadline covers it all; the reply is never blocked or aborted.
// - Write: the server plugin writes on chat save when installed; otherwise this extension writes (writer.js).
// - Show: a note under each reply lists the memories injected for it, or says why it got none (note.js); the panel's
//   status line names the part that fails (status.js); both in SillyTavern's language (i18n.js).
// - Test hook: globalThis.jiyiMemory.last / .history describe the last interceptions (CONTRACT.md).

import { getCurrentUserHandle } from '../../../user.js';
import { languageOf, translateTree, translator } from './i18n.js';
import { EXTRA_KEY, attachNote, noteFromRecord, noteHtml } from './note.js';
import { DEFAULT_REWRITE_PROMPT, effectiveSettings, loadSettings } from './settings.js';
import { consoleMemoryUrl, consoleScopeUrl, describeStatus, problemText, stopsWrites, urlField } from './status.js';
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

/** SillyTavern's UI language (1.19: getContext().getCurrentLocale(); it reloads the page when the user changes it). */
function currentLocale() {
    try {
        const locale = context().getCurrentLocale?.();
        if (locale) return locale;
    } catch {
        // an older SillyTavern: its own storage key and fallback
    }
    return globalThis.localStorage?.getItem('language') || globalThis.navigator?.language || 'en';
}

const language = languageOf(currentLocale());
const t = translator(language);

// The recall of the generation under way, until its reply arrives (MESSAGE_RECEIVED) and takes its note.
let pending = null;

const hook = { last: null, history: [], transport, writer, settings: currentSettings, language };
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
    let record = { type, skipped: true, transport: null, addedMs: 0, injectedIds: [], injected: [], stages: [],
        degraded: false, error: null, problem: null, block: '' };
    let deadline = null;
    try {
        // First of all: a block from an earlier reply must never leak into this one, whatever happens next.
        setMemoryPrompt('');
        const settings = currentSettings();
        if (!settings.enabled || SKIPPED_TYPES.has(type)) {
            record.reason = settings.enabled ? 'type' : 'off';
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
        // Background prompts and impersonation make no reply of the character: they must not take its note.
        if (!SKIPPED_TYPES.has(type)) pending = { chatId: chatIdNow(), record };
        warnOnce(record);
    }
};

function chatIdNow() {
    try {
        return String(context().getCurrentChatId?.() ?? '');
    } catch {
        return '';
    }
}

/** A toast when recall starts failing (not on every reply of an outage): the note on each reply says the rest. */
let failing = null;  // the kind of problem of the last recall that ran (skipped ones do not count)
function warnOnce(record) {
    if (record.skipped) return;
    const problem = record.problem && stopsWrites(record.problem) ? record.problem : null;
    const before = failing;
    failing = problem?.kind ?? null;
    if (before === failing) return;
    void refreshConnection();  // failing or back: the status line must not go on saying what the last check saw
    if (!problem) return;
    const text = `${problemText(problem, t)} ${t('note.catch_up')}`;
    globalThis.toastr?.warning(text, t('toast.title'), { preventDuplicates: true, timeOut: 8000 });
}

// --- the note on each reply ------------------------------------------------------------------------------------

/** A reply arrived: it takes the note of the recall made for it (or loses a note from an earlier swipe). */
function onMessageReceived(messageId, type) {
    if (type === 'first_message' || pending === null) return;
    const { chatId, record } = pending;
    pending = null;
    if (chatId !== chatIdNow()) return;
    const message = context().chat?.[Number(messageId)];
    if (!message || message.is_user) return;
    attachNote(message, noteFromRecord(record));
}

/** Draw (or remove) the note of one message from its saved data. */
function renderNote(messageId) {
    const element = document.querySelector(`#chat .mes[mesid="${Number(messageId)}"]`);
    if (!element) return;
    element.querySelectorAll('.jiyi-memory-note').forEach(old => old.remove());
    if (!currentSettings().showNotes) return;
    const note = context().chat?.[Number(messageId)]?.extra?.[EXTRA_KEY];
    if (!note || typeof note !== 'object') return;
    const base = transport.consoleBase();
    const html = noteHtml(note, { t, memoryUrl: id => consoleMemoryUrl(base, id) });
    element.querySelector('.mes_block')?.insertAdjacentHTML('beforeend', html);
}

function renderAllNotes() {
    document.querySelectorAll('#chat .mes[mesid]').forEach(element => renderNote(element.getAttribute('mesid')));
}

// --- settings panel --------------------------------------------------------------------------------------------

const FIELDS = [
    // [element id, setting, kind]
    ['#jiyi_memory_enabled', 'enabled', 'checkbox'],
    ['#jiyi_memory_show_notes', 'showNotes', 'checkbox'],
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
    if (key === 'showNotes') renderAllNotes();
    renderStatus();
}

function toggleRewriteFields() {
    const rewrite = document.querySelector('#jiyi_memory_rewrite')?.checked;
    document.querySelector('#jiyi_memory_rewrite_fields')?.classList.toggle('jiyi-memory-dim', !rewrite);
}

async function refreshConnection() {
    const settings = currentSettings();
    if (settings.transport !== 'direct') await transport.probePlugin();
    const viaPlugin = settings.transport === 'plugin' || (settings.transport === 'auto' && transport.plugin.present);
    if (!viaPlugin) await transport.probeDirect();
    renderStatus();
    renderAllNotes();  // the console links follow the route
}

/** The console page of this user, narrowed to the open character (a group chat: the whole user). */
function consoleLink() {
    const ctx = context();
    const agentId = ctx.groupId ? null : ctx.characters?.[ctx.characterId]?.avatar;
    return consoleScopeUrl(transport.consoleBase(), userHandle(), agentId);
}

function renderStatus() {
    const element = document.querySelector('#jiyi_memory_status');
    if (element) {
        element.textContent = describeStatus({
            settings: currentSettings(), plugin: transport.plugin, direct: transport.direct, last: hook.last,
        }, t);
    }
    const link = document.querySelector('#jiyi_memory_console');
    if (link) link.href = consoleLink();
    const url = document.querySelector('#jiyi_memory_url');
    if (url && document.activeElement !== url) {
        const field = urlField({ settings: currentSettings(), plugin: transport.plugin }, t);
        url.value = field.value;
        url.readOnly = field.readOnly;
        url.title = field.title;
    }
}

async function mountSettings() {
    const html = await context().renderExtensionTemplateAsync(EXTENSION_PATH, 'settings');
    const container = document.querySelector('#extensions_settings2') ?? document.querySelector('#extensions_settings');
    container.insertAdjacentHTML('beforeend', html);
    const panel = document.querySelector('#jiyi_memory_settings');
    translateTree(panel, t);
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
    const on = (name, handler) => {
        if (eventTypes[name]) eventSource.on(eventTypes[name], handler);
    };
    // Before the writer's handler and the chat save: the note is saved with the reply.
    on('MESSAGE_RECEIVED', onMessageReceived);
    // Writes without the plugin: a finished reply, and every change that can make an earlier turn stale.
    for (const name of ['MESSAGE_RECEIVED', 'MESSAGE_SWIPED', 'MESSAGE_EDITED', 'MESSAGE_DELETED', 'MESSAGE_UPDATED',
        'MESSAGE_SWIPE_DELETED']) {
        on(name, () => writer.schedule());
    }
    for (const name of ['CHARACTER_MESSAGE_RENDERED', 'MESSAGE_SWIPED', 'MESSAGE_UPDATED', 'MESSAGE_EDITED']) {
        on(name, messageId => renderNote(messageId));
    }
    on('MORE_MESSAGES_LOADED', renderAllNotes);
    on('CHAT_CHANGED', () => {
        // A block recalled for another chat must not show up in this chat's dry runs (token counts, prompt view).
        setMemoryPrompt('');
        pending = null;
        renderStatus();  // the console link follows the character
        setTimeout(renderAllNotes, 0);  // the chat's messages are printed after this event
    });
    on('CHAT_LOADED', renderAllNotes);
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

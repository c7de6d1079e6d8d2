// The extension's settings: extension_settings.jiyi_memory (names in CONTRACT.md), saved by SillyTavern with the
// user's settings. Every generation reads them afresh, so a change counts from the next generation on.

export const SETTINGS_KEY = 'jiyi_memory';

// The rewrite prompt shown in the settings panel. It is a system prompt; the user message is JSON with user_name,
// char_name, user_question and recent_conversation (the seed's contract, the same jiyi's own rewrite sends).
export const DEFAULT_REWRITE_PROMPT = `You write search queries for a long-term memory about the user of a role-play chat.
You get JSON: user_name, char_name, user_question (the user's latest message) and recent_conversation.
Rewrite user_question into ONE self-contained query that would find what the user said before:
- Resolve what it refers to from recent_conversation ("that", "it", "you remember?", 那个、那件事、还记得吗、有什么不一样): name the concrete people, things, events, feelings and times.
- Say what about the user is being looked for (a preference, an event, a state, a plan).
- Same language as user_question: 中文问题用中文写，English questions in English. One line, at most 60 汉字 or 40 words.
- Output only the query: no explanation, no quotes, no markdown, no "Query:" prefix. 只输出检索句本身。
Example: recent_conversation says the user slept badly last night; user_question is "你今天有什么不一样？" -> 结合最近对话：用户昨晚失眠，询问今天状态有何变化`;

export const DEFAULT_SETTINGS = Object.freeze({
    enabled: true,
    serviceUrl: 'http://127.0.0.1:8888',
    transport: 'auto',  // auto: the server plugin when it answers, else jiyi directly; or 'plugin' / 'direct'
    rewrite: false,
    rewriteSource: 'jiyi',  // 'jiyi': jiyi's configured LLM; 'sillytavern': SillyTavern's own connection
    rewritePrompt: DEFAULT_REWRITE_PROMPT,
    topK: 5,
    budgetChars: 1200,
    deadlineMs: 1500,
    contextMessages: 6,
    writeWithoutPlugin: true,
    // The note under each reply (which memories it used, or why it got none). On: it is one collapsed line, only on
    // replies that used memories or had none because of a failure, and without it a user cannot tell memory works.
    showNotes: true,
});

const LIMITS = {
    topK: [1, 50],
    budgetChars: [100, 20000],
    deadlineMs: [100, 60000],
    contextMessages: [0, 100],
};

const CHOICES = {
    transport: ['auto', 'plugin', 'direct'],
    rewriteSource: ['jiyi', 'sillytavern'],
};

/** The settings object inside SillyTavern's extension_settings, created or completed with the defaults. */
export function loadSettings(extensionSettings) {
    const current = extensionSettings[SETTINGS_KEY] ?? {};
    extensionSettings[SETTINGS_KEY] = current;
    for (const [key, value] of Object.entries(DEFAULT_SETTINGS)) {
        if (current[key] === undefined || current[key] === null) current[key] = value;
    }
    return current;
}

/** A copy fit to use: numbers clamped, choices checked, a blank rewrite prompt replaced by the default. */
export function effectiveSettings(settings) {
    const effective = { ...DEFAULT_SETTINGS, ...settings };
    for (const [key, [low, high]] of Object.entries(LIMITS)) {
        const value = Math.round(Number(effective[key]));
        effective[key] = Number.isFinite(value) ? Math.min(Math.max(value, low), high) : DEFAULT_SETTINGS[key];
    }
    for (const [key, allowed] of Object.entries(CHOICES)) {
        if (!allowed.includes(effective[key])) effective[key] = DEFAULT_SETTINGS[key];
    }
    effective.serviceUrl = String(effective.serviceUrl || DEFAULT_SETTINGS.serviceUrl).trim().replace(/\/+$/, '');
    if (!String(effective.rewritePrompt ?? '').trim()) effective.rewritePrompt = DEFAULT_REWRITE_PROMPT;
    effective.enabled = Boolean(effective.enabled);
    effective.rewrite = Boolean(effective.rewrite);
    effective.writeWithoutPlugin = Boolean(effective.writeWithoutPlugin);
    effective.showNotes = Boolean(effective.showNotes);
    return effective;
}

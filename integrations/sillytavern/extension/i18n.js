// Every word the extension shows, in English and Chinese side by side, so no label exists in one language only
// (tests/i18n.test.mjs checks the table, the template and the code against each other).
//
// The language follows SillyTavern's: getContext().getCurrentLocale() (1.19: the "UI Language" setting, else the
// browser's language), e.g. 'en', 'zh-cn', 'zh-tw'. Any Chinese locale gets the Chinese texts (they are Simplified);
// every other locale gets English.

export const LANGUAGES = ['en', 'zh'];

/** key -> [English, Chinese]. `{name}` is filled in by t(key, {name}). */
export const STRINGS = {
    // --- the panel (settings.html, data-jiyi-i18n) ---
    'panel.title': ['jiyi Memory', 'jiyi 记忆'],
    'panel.enabled': ['Use long-term memory (recall before each reply, write as the chat goes on)',
        '启用长期记忆（每次回复前检索，聊天时写入）'],
    'panel.show_notes': ['Show under each reply which memories it used', '在回复下方显示它用到的记忆'],
    'panel.console': ['Open in jiyi console', '在 jiyi 控制台查看'],
    'panel.console_hint': ['this user and character', '当前用户和角色'],
    'panel.retrieval': ['Retrieval', '检索'],
    'panel.top_k': ['Memories per reply (at most)', '每次回复最多用几条记忆'],
    'panel.budget': ['Memory block length (characters)', '记忆块长度（字符数）'],
    'panel.deadline': ['Deadline (ms)', '截止时间（毫秒）'],
    'panel.context_messages': ['Recent messages in the context query', '上下文检索用的最近消息数'],
    'panel.enhancement': ['Query enhancement', '查询增强'],
    'panel.rewrite': ['Rewrite weak questions with an LLM when the question and the recent context find nothing',
        '问题和最近对话都检索不到时，用 LLM 把问题改写成完整的检索句'],
    'panel.rewrite_source': ['Rewrite with', '改写用的模型'],
    'panel.rewrite_source.jiyi': ["jiyi's LLM (configured on the jiyi server)", 'jiyi 的 LLM（在 jiyi 服务器上配置）'],
    'panel.rewrite_source.sillytavern': ["SillyTavern's current connection", 'SillyTavern 当前连接的模型'],
    'panel.rewrite_prompt': ['Rewrite prompt', '改写 prompt'],
    'panel.rewrite_hint': ['The model gets JSON {user_name, char_name, user_question, recent_conversation} and must '
        + 'answer with one search query only. A rewrite needs time: raise the deadline (e.g. 4000 ms) if your model is '
        + 'slow.', '模型收到 JSON {user_name, char_name, user_question, recent_conversation}，只能输出一句检索句。'
        + '改写需要时间：模型较慢时请调高截止时间（例如 4000 毫秒）。'],
    'panel.rewrite_reset': ['Reset prompt', '恢复默认 prompt'],
    'panel.connection': ['Connection', '连接'],
    'panel.url': ['jiyi URL (for direct calls, without the server plugin)', 'jiyi 地址（不经服务器插件、直接访问时使用）'],
    'panel.route': ['Route', '通道'],
    'panel.route.auto': ['Auto: server plugin if installed, else direct', '自动：装了服务器插件就用插件，否则直连'],
    'panel.route.plugin': ['Server plugin only', '只用服务器插件'],
    'panel.route.direct': ['Direct to jiyi only', '只直连 jiyi'],
    'panel.write_without_plugin': ['Without the server plugin, write memories from this browser',
        '没有服务器插件时，由本浏览器写入记忆'],
    'panel.check': ['Check connection', '检查连接'],

    // --- the URL field ---
    'url.from_plugin': ['The server plugin reaches jiyi at this address (set in plugins/jiyi/config.json or JIYI_URL). '
        + 'This field is used only when the browser calls jiyi directly.',
    '服务器插件通过这个地址访问 jiyi（在 plugins/jiyi/config.json 或 JIYI_URL 中设置）。只有浏览器直连 jiyi 时才使用此处填写的地址。'],
    'url.direct': ['The address this browser calls jiyi at.', '本浏览器直连 jiyi 的地址。'],
    // --- the status line ---
    'status.off': ['Memory is off: nothing is recalled or written.', '长期记忆已关闭：不检索，也不写入。'],
    'status.checking': ['Checking the connection…', '正在检查连接…'],
    'status.via_plugin': ['Route: server plugin → jiyi at {url}.', '通道：服务器插件 → jiyi（{url}）。'],
    'status.direct': ['Route: this browser → jiyi at {url}.', '通道：本浏览器 → jiyi（{url}）。'],
    'status.direct_no_plugin': ['Route: this browser → jiyi at {url} (no server plugin found).',
        '通道：本浏览器 → jiyi（{url}）（没有找到服务器插件）。'],
    'status.reachable': ['jiyi is reachable.', 'jiyi 可以访问。'],
    'status.writes_plugin': ['Memories are written by the plugin each time the chat is saved.',
        '记忆由插件在每次保存聊天时写入。'],
    'status.writes_browser': ['Memories are written by this browser after each reply.', '记忆由本浏览器在每次回复后写入。'],
    'status.writes_none': ['Nothing writes memories (the plugin is not writing and browser writes are off).',
        '没有任何一方在写入记忆（插件未写入，浏览器写入也已关闭）。'],
    'status.catch_up_save': ['Turns said while jiyi is away are written on the next save once it is back.',
        'jiyi 不可用期间的对话，会在它恢复后、下次保存聊天时补写。'],
    'status.catch_up_reply': ['Turns said while jiyi is away are written after the next reply once it is back.',
        'jiyi 不可用期间的对话，会在它恢复后、下一次回复后补写。'],
    'status.last_used': ['Last reply: {count} memories, {ms} ms.', '上一次回复：用了 {count} 条记忆，{ms} 毫秒。'],
    'status.last_used_one': ['Last reply: 1 memory, {ms} ms.', '上一次回复：用了 1 条记忆，{ms} 毫秒。'],
    'status.last_none': ['Last reply: no relevant memory found, {ms} ms.', '上一次回复：没有找到相关记忆，{ms} 毫秒。'],
    'status.last_problem': ['Last reply: no memories — {problem}', '上一次回复：没有记忆——{problem}'],
    'status.last_skipped': ['Last reply: recall skipped ({reason}).', '上一次回复：跳过了检索（{reason}）。'],

    // --- why a recall was skipped ---
    'skip.off': ['memory is off', '长期记忆已关闭'],
    'skip.type': ['{type} generation', '{type} 类生成'],
    'skip.no_user_message': ['no user message yet', '还没有用户消息'],
    'skip.no_character': ['no character selected', '没有选中角色'],

    // --- what went wrong (status line, note on the reply, toast) ---
    'problem.plugin_missing': ["the server plugin did not answer: is it in SillyTavern's plugins/jiyi folder, with "
        + 'enableServerPlugins: true in config.yaml (then restart SillyTavern)?',
    '服务器插件没有应答：请确认它在 SillyTavern 的 plugins/jiyi 目录里，并且 config.yaml 中 enableServerPlugins: true'
        + '（改完要重启 SillyTavern）。'],
    'problem.unreachable_plugin': ["jiyi at {url} cannot be reached from SillyTavern's server: is `jiyi serve` running "
        + 'there?', 'SillyTavern 服务器连不上 jiyi（{url}）：`jiyi serve` 在运行吗？'],
    'problem.unreachable_direct': ['jiyi at {url} cannot be reached from this browser: it is not running, or it does '
        + "not allow this page's origin (JIYI_CORS_ORIGINS).",
    '本浏览器连不上 jiyi（{url}）：它没有运行，或者没有允许本页面的来源（JIYI_CORS_ORIGINS）。'],
    'problem.timeout': ['jiyi accepted the call but did not answer within {ms} ms: it is busy or frozen.',
        'jiyi 接受了请求，但 {ms} 毫秒内没有应答：它太忙或卡住了。'],
    'problem.auth': ['jiyi refused the call (HTTP {status}): it wants an API key. Give it to the server plugin '
        + '(JIYI_API_KEY, or userApiKeys in plugins/jiyi/config.json); the browser never holds a key.',
    'jiyi 拒绝了请求（HTTP {status}）：它需要 API key。请把 key 配置给服务器插件（JIYI_API_KEY，或 plugins/jiyi/config.json '
        + '里的 userApiKeys）；浏览器不保存 key。'],
    'problem.jiyi_error': ['jiyi answered with an error: {detail}', 'jiyi 返回了错误：{detail}'],
    'problem.degraded': ['jiyi could not search its memory: {detail}', 'jiyi 无法检索记忆：{detail}'],

    // --- the note on a reply ---
    'note.used': ['jiyi: {count} memories used', 'jiyi：用了 {count} 条记忆'],
    'note.used_one': ['jiyi: 1 memory used', 'jiyi：用了 1 条记忆'],
    'note.problem': ['jiyi: no memories for this reply', 'jiyi：这条回复没有用到记忆'],
    'note.none': ['jiyi: nothing remembered fit this reply', 'jiyi：没有与这条回复相关的记忆'],
    'note.open': ['open in the console', '在控制台查看'],
    'note.catch_up': ['This turn is written to jiyi once it is back.', 'jiyi 恢复后，这一轮对话会补写进去。'],
    'toast.title': ['jiyi Memory', 'jiyi 记忆'],
};

/** 'zh' for any Chinese locale ('zh', 'zh-cn', 'zh-tw', 'zh_CN'), else 'en'. */
export function languageOf(locale) {
    return /^zh(?:[-_]|$)/i.test(String(locale ?? '').trim()) ? 'zh' : 'en';
}

/** t(key, values) in `language`; an unknown key is shown as itself (a visible bug, not a crash). */
export function translator(language) {
    const column = Math.max(0, LANGUAGES.indexOf(language));
    return (key, values = {}) => {
        const text = STRINGS[key]?.[column] ?? key;
        return text.replace(/\{(\w+)\}/g, (whole, name) => (name in values ? String(values[name]) : whole));
    };
}

/** Put the texts of `language` into every element of `root` marked data-jiyi-i18n="key". */
export function translateTree(root, t) {
    for (const element of root.querySelectorAll('[data-jiyi-i18n]')) {
        element.textContent = t(element.getAttribute('data-jiyi-i18n'));
    }
}

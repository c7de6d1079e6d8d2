// Recall before a reply: ask jiyi for the memory block of this conversation, with one deadline for everything.
//
// jiyi's POST /context runs the seed's chain itself: the last user message, then the recent conversation, then
// (with `rewrite`) an LLM rewrite. When the user picks SillyTavern's own connection for the rewrite, the chain is
// split: a first call without rewrite; only if it found nothing relevant, SillyTavern's model rewrites the question
// (generateRaw) and a second call searches with `rewritten_query`. Once jiyi is unreachable, nothing else is tried.

import { Unreachable } from './transport.js';

const NETWORK_MARGIN_MS = 100;  // jiyi's own deadline is this much shorter than ours, so its answer still arrives
const MIN_REWRITE_MS = 300;  // below this a model cannot answer; the rewrite is skipped
const SECOND_CALL_RESERVE_MS = 250;  // kept back from the rewrite for the search with its result
const REWRITE_MAX_TOKENS = 120;
const CONTEXT_MAX_CHARS = 1200;  // as jiyi's own rewrite input (core/query_enhancement.py)

/** The chat as OpenAI-format messages: the last `count` spoken messages (system notes and hidden messages left out). */
export function chatMessages(chat, count) {
    const spoken = chat.filter(m => m && !m.is_system && typeof m.mes === 'string' && m.mes.trim());
    return spoken.slice(-count).map(m => ({
        role: m.is_user ? 'user' : 'assistant',
        content: m.mes,
        ...(m.name ? { name: String(m.name) } : {}),
    }));
}

/** A clock for one interception: how much of the deadline is left, and an AbortSignal that fires at its end. */
export class Deadline {
    constructor(ms) {
        this.end = performance.now() + ms;
        this.controller = new AbortController();
        this.timer = setTimeout(
            () => this.controller.abort(new Unreachable('deadline reached', { kind: 'timeout' })), ms);
    }

    get signal() {
        return this.controller.signal;
    }

    remaining() {
        return Math.max(0, this.end - performance.now());
    }

    dispose() {
        clearTimeout(this.timer);
    }
}

/**
 * Find the memory block for the next reply. Never rejects: failures end up in the returned record.
 * @returns {Promise<{block: string, record: object}>} record: transport, injectedIds, stages, degraded, error, and
 *   `skipped` + `reason` when there was nothing to look up
 */
export async function recall({ chat, settings, transport, context, deadline }) {
    const record = { transport: null, injectedIds: [], injected: [], stages: [], degraded: false, error: null,
        problem: null };
    let block = '';
    try {
        const messages = chatMessages(chat, settings.contextMessages + 2);
        if (!messages.some(m => m.role === 'user')) {
            record.skipped = true;
            record.reason = 'no user message';
            return { block, record };
        }
        const agentId = context.characters?.[context.characterId]?.avatar;
        if (!agentId) {
            record.skipped = true;
            record.reason = 'no character selected';
            return { block, record };
        }
        record.transport = await transport.choose(Math.min(300, deadline.remaining()));
        const base = {
            messages, agent_id: agentId, top_k: settings.topK, budget_chars: settings.budgetChars,
            user_name: context.name1, char_name: context.name2, context_messages: settings.contextMessages,
        };
        const ask = async extra => {
            const deadlineMs = Math.floor(deadline.remaining() - NETWORK_MARGIN_MS);
            if (deadlineMs < 50) throw new Unreachable('deadline reached', { kind: 'timeout', via: record.transport });
            return transport.context(record.transport, { ...base, ...extra, deadline_ms: deadlineMs }, deadline.signal);
        };

        let answer;
        if (settings.rewrite && settings.rewriteSource === 'jiyi') {
            answer = await ask({ rewrite: true, rewrite_prompt: settings.rewritePrompt });
            record.stages.push(...(answer?.stages ?? []));
        } else {
            answer = await ask({ rewrite: false });
            record.stages.push(...(answer?.stages ?? []).filter(s => !(s.stage === 'rewrite' && s.outcome === 'skipped')));
            if (settings.rewrite && nothingFound(answer)) {
                const rewritten = await rewriteWithSillyTavern({ messages, settings, context, deadline, record });
                if (rewritten) {
                    answer = await ask({ rewrite: true, rewritten_query: rewritten });
                    // The second call repeats the question and context searches; only its rewrite stage is new.
                    record.stages.push(...(answer?.stages ?? []).filter(s => s.stage === 'rewrite'));
                }
            }
        }
        record.degraded = Boolean(answer?.degraded);
        if (answer?.error) {
            record.error = answer.error;
            // jiyi answered, without memories: its own deadline ran out, or its embedder or store failed.
            record.problem = String(answer.error).startsWith('DeadlineExceeded')
                ? { kind: 'timeout', via: record.transport, ms: settings.deadlineMs }
                : { kind: 'degraded', detail: String(answer.error).slice(0, 200) };
        }
        block = typeof answer?.memory_block === 'string' ? answer.memory_block : '';
        const injected = block ? (answer.memories ?? []) : [];
        record.injectedIds = injected.map(m => m.id);
        record.injected = injected.map(m => ({ id: m.id, memory: m.memory }));
    } catch (error) {
        record.degraded = true;
        record.error = `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}`.slice(0, 300);
        record.unreachable = error instanceof Unreachable;
        record.problem = problemOf(error, settings);
    }
    return { block, record };
}

/** Which part failed, for the status line and the note on the reply (status.js). */
function problemOf(error, settings) {
    const detail = String(error.message ?? error).slice(0, 200);
    const problem = { ...(error.problem ?? { kind: 'jiyi_error', detail }) };
    if (problem.kind === 'timeout' && !problem.ms) problem.ms = settings.deadlineMs;
    if (problem.kind === 'unreachable' && problem.via === 'direct' && !problem.url) problem.url = settings.serviceUrl;
    return problem;
}

function nothingFound(answer) {
    return answer && !answer.degraded && !answer.error && (answer.memories ?? []).length === 0;
}

/** One self-contained query from SillyTavern's own model, within what is left of the deadline; null if none. */
async function rewriteWithSillyTavern({ messages, settings, context, deadline, record }) {
    const started = performance.now();
    const stage = { stage: 'st_rewrite', outcome: 'skipped', query: '', elapsed_ms: 0 };
    record.stages.push(stage);
    const budget = deadline.remaining() - SECOND_CALL_RESERVE_MS;
    if (budget < MIN_REWRITE_MS) {
        stage.detail = 'no time left before the deadline';
        return null;
    }
    if (typeof context.generateRaw !== 'function') {
        stage.detail = 'generateRaw is not available';
        return null;
    }
    const input = rewriteInput(messages, context.name1, context.name2);
    let timer;
    try {
        // generateRaw takes no abort signal: past the budget its answer is ignored (the request may still finish).
        const answer = await Promise.race([
            context.generateRaw({
                prompt: JSON.stringify(input), systemPrompt: settings.rewritePrompt,
                responseLength: REWRITE_MAX_TOKENS, trimNames: false,
            }),
            new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('timeout')), budget); }),
        ]);
        const query = cleanRewrite(String(answer ?? ''));
        stage.outcome = query ? 'done' : 'error';
        stage.query = query ?? '';
        if (!query) stage.detail = 'the rewrite was empty';
        return query;
    } catch (error) {
        stage.outcome = error.message === 'timeout' ? 'timeout' : 'error';
        stage.detail = String(error.message ?? error).slice(0, 200);
        return null;
    } finally {
        clearTimeout(timer);
        stage.elapsed_ms = Math.round(performance.now() - started);
    }
}

/** The rewrite prompt's input (the seed's contract): {user_name, char_name, user_question, recent_conversation}. */
export function rewriteInput(messages, userName, charName) {
    let questionIndex = -1;
    messages.forEach((m, i) => { if (m.role === 'user') questionIndex = i; });
    const question = oneLine(messages[questionIndex]?.content ?? '');
    const lines = [];
    let room = CONTEXT_MAX_CHARS;
    for (const m of messages.slice(0, questionIndex).reverse()) {
        const line = `${m.name || (m.role === 'user' ? userName : charName) || m.role}: ${oneLine(m.content)}`;
        if (line.length + 1 > room) break;
        lines.unshift(line);
        room -= line.length + 1;
    }
    return {
        user_name: userName || 'User', char_name: charName || 'Assistant',
        user_question: question, recent_conversation: lines.join('\n'),
    };
}

const PREFIX = /^(?:rewritten query|search query|query|rewrite|改写后的查询|改写后|改写|查询|检索句)\s*[:：]\s*/i;
const QUOTES = /^["'“”‘’「」『』`]+|["'“”‘’「」『』`]+$/g;

/** The first meaningful line of a model's answer, without reasoning, markdown, quotes or a "Query:" prefix (as
 * jiyi's clean_rewrite does for its own rewrites). */
export function cleanRewrite(answer) {
    const text = answer.replace(/<think>[\s\S]*?<\/think>/g, '');
    for (const raw of text.split('\n')) {
        let line = raw.trim().replace(/^`+|`+$/g, '').trim();
        if (!line || line.startsWith('```')) continue;
        line = line.replace(/^(?:[#>*-]+|\d+[.)])\s*/, '').replace(PREFIX, '').replaceAll('**', '').trim();
        line = line.replace(QUOTES, '').trim();
        if (line) return line.slice(0, 300);
    }
    return null;
}

function oneLine(text) {
    return String(text).split(/\s+/).filter(Boolean).join(' ');
}

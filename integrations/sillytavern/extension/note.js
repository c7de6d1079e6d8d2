// The note on a reply: which memories were injected for it, or why it got none (jiyi unreachable, slow, refusing
// the key...). The note's data is kept in the message's `extra.jiyi_memory` (saved with the chat, per swipe), so it
// still shows after a reload and always describes the reply it sits on. Pure functions: no DOM, no SillyTavern.

import { problemText, stopsWrites } from './status.js';

export const EXTRA_KEY = 'jiyi_memory';
const MAX_SHOWN_CHARS = 400;  // a memory longer than this is cut in the note (the console shows it whole)

/**
 * The note for a reply from the recall record of its generation: the memories used, the problem that kept it from
 * any, or — when recall worked and nothing fit — a quiet line saying so, so that a miss is told apart from an outage.
 * Null when recall was skipped.
 */
export function noteFromRecord(record) {
    if (!record || record.skipped) return null;
    if (record.problem) return { v: 1, at: record.at ?? null, memories: [], problem: { ...record.problem } };
    const memories = (record.injected ?? []).map(m => ({ id: String(m.id), text: String(m.memory ?? '') }));
    return { v: 1, at: record.at ?? null, memories, problem: null };
}

/**
 * The note as HTML: a collapsed <details> (one short line until opened).
 * @param {object} note from noteFromRecord
 * @param {object} options
 * @param {Function} options.t translator
 * @param {(id: string) => string|null} [options.memoryUrl] a link to a memory's console page, or null for none
 */
export function noteHtml(note, { t, memoryUrl = () => null }) {
    if (!note) return '';
    if (note.problem) {
        const catchUp = stopsWrites(note.problem)
            ? `<div class="jiyi-memory-note-hint">${escapeHtml(t('note.catch_up'))}</div>` : '';
        return `<details class="jiyi-memory-note jiyi-memory-note-problem" data-jiyi-note="problem" `
            + `data-kind="${escapeHtml(note.problem.kind)}">`
            + `<summary><i class="fa-solid fa-triangle-exclamation"></i> ${escapeHtml(t('note.problem'))}</summary>`
            + `<div class="jiyi-memory-note-body">${escapeHtml(problemText(note.problem, t))}${catchUp}</div>`
            + '</details>';
    }
    const count = note.memories.length;
    if (count === 0) {
        return `<div class="jiyi-memory-note jiyi-memory-note-none" data-jiyi-note="none">`
            + `<i class="fa-solid fa-brain"></i> ${escapeHtml(t('note.none'))}</div>`;
    }
    const title = count === 1 ? t('note.used_one') : t('note.used', { count });
    const items = note.memories.map(memory => {
        const url = memoryUrl(memory.id);
        const link = url ? ` <a href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer" `
            + `title="${escapeHtml(t('note.open'))}"><i class="fa-solid fa-arrow-up-right-from-square"></i></a>` : '';
        return `<li data-memory-id="${escapeHtml(memory.id)}"><span class="jiyi-memory-note-text">`
            + `${escapeHtml(shorten(memory.text))}</span>${link}</li>`;
    }).join('');
    return `<details class="jiyi-memory-note" data-jiyi-note="used">`
        + `<summary><i class="fa-solid fa-brain"></i> ${escapeHtml(title)}</summary>`
        + `<ul class="jiyi-memory-note-body">${items}</ul></details>`;
}

/** Put `note` on a message object (and on its current swipe, so swiping away and back keeps it); null removes it. */
export function attachNote(message, note) {
    if (!message) return;
    const targets = [message];
    const swipeExtra = message.swipe_info?.[message.swipe_id]?.extra;
    if (swipeExtra && typeof swipeExtra === 'object') targets.push({ extra: swipeExtra });
    for (const target of targets) {
        if (!target.extra || typeof target.extra !== 'object') target.extra = {};
        if (note) target.extra[EXTRA_KEY] = note;
        else delete target.extra[EXTRA_KEY];
    }
}

export function escapeHtml(text) {
    return String(text ?? '').replace(/[&<>"']/g, c => ({
        '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;',
    })[c]);
}

function shorten(text) {
    const flat = String(text).split(/\s+/).filter(Boolean).join(' ');
    return flat.length > MAX_SHOWN_CHARS ? `${flat.slice(0, MAX_SHOWN_CHARS - 1)}…` : flat;
}

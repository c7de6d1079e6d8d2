// From a successful SillyTavern chat save to a turn-ledger snapshot: who the user is, which chat, whose replies.
//
// Identity (CONTRACT): user_id = the authenticated user's handle (from the session, never from the body);
// agent_id = the character's avatar file name, unique where names are not; run_id = the chat file name.
// A solo save names its character (avatar_url). A group save names only its chat id: the group is looked up in the
// user's groups folder, and each reply's speaker is the member in the message's `original_avatar`.

import fs from 'node:fs/promises';
import path from 'node:path';

/** Solo save body: {ch_name, file_name, chat: [header, ...messages], avatar_url}. */
export function soloSnapshot(request) {
    const body = request.body ?? {};
    const avatar = String(body.avatar_url ?? '');
    const runId = String(body.file_name ?? '');
    if (!avatar || !runId || !Array.isArray(body.chat)) return null;
    const name = String(body.ch_name ?? '');
    return {
        chatKey: `${avatar}/${runId}`,
        snapshot: {
            userId: request.user.profile.handle,
            runId,
            messages: body.chat.slice(1),
            resolveSpeaker: () => ({ agentId: avatar, characterName: name }),
        },
    };
}

/** Group save body: {id: <chat id>, chat: [header, ...messages]}. */
export async function groupSnapshot(request, groups) {
    const body = request.body ?? {};
    const chatId = String(body.id ?? '');
    if (!chatId || !Array.isArray(body.chat)) return null;
    const group = await groups.findByChat(request.user.directories.groups, chatId);
    const members = new Set(group?.members ?? []);
    return {
        chatKey: `group/${chatId}`,
        snapshot: {
            userId: request.user.profile.handle,
            runId: chatId,
            groupId: group?.id ?? undefined,
            messages: body.chat.slice(1),
            // A reply by someone no longer in the group (or with no avatar recorded) is not attributed to anyone.
            resolveSpeaker: message => {
                const avatar = message.original_avatar;
                if (!avatar || (group && !members.has(avatar))) return null;
                return { agentId: avatar, characterName: String(message.name ?? '') };
            },
        },
    };
}

/** Which group a group chat belongs to, from data/<handle>/groups/*.json, cached by chat id. */
export class GroupIndex {
    constructor() {
        this.byChat = new Map();  // `${folder}\n${chatId}` -> group
    }

    async findByChat(folder, chatId) {
        const key = `${folder}\n${chatId}`;
        const cached = this.byChat.get(key);
        if (cached) {
            // Members come and go: re-read the cached group's file, it is small.
            const fresh = await readGroup(path.join(folder, `${cached.id}.json`));
            if (fresh && groupHasChat(fresh, chatId)) {
                this.byChat.set(key, fresh);
                return fresh;
            }
        }
        let names = [];
        try {
            names = (await fs.readdir(folder)).filter(name => name.endsWith('.json'));
        } catch {
            return null;
        }
        for (const name of names) {
            const group = await readGroup(path.join(folder, name));
            if (group && groupHasChat(group, chatId)) {
                this.byChat.set(key, group);
                return group;
            }
        }
        return null;
    }
}

function groupHasChat(group, chatId) {
    return group.chat_id === chatId || (Array.isArray(group.chats) && group.chats.includes(chatId));
}

async function readGroup(file) {
    try {
        const group = JSON.parse(await fs.readFile(file, 'utf8'));
        return group && typeof group.id === 'string' ? group : null;
    } catch {
        return null;
    }
}

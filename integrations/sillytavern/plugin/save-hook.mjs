// Seeing chat saves. SillyTavern has no hook for plugins when a chat is saved, and a plugin's own router is mounted
// under /api/plugins/<id>/ only. So the plugin imports SillyTavern's chats router (src/endpoints/chats.js, the very
// module instance the server mounted at /api/chats) and puts a layer in front of its routes that watches
// POST /save and POST /group/save finish. This relies on SillyTavern internals (checked on 1.19.0): every step is
// checked, and on any surprise the hook is simply not installed (health then says `writes: false` and the extension
// writes by itself).

import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const SAVE_PATHS = { '/save': 'solo', '/group/save': 'group' };

/**
 * Install `onSave(kind, request)` to run after each successful chat save (HTTP 200), outside the request: the save's
 * answer is never delayed and an error in `onSave` never reaches SillyTavern.
 * @param {(kind: 'solo'|'group', request: import('express').Request) => void} onSave
 * @returns {Promise<{installed: boolean, reason?: string}>}
 */
export async function hookChatSaves(onSave, { serverRoot = process.cwd(), log = console } = {}) {
    let router;
    try {
        // server.js chdirs to SillyTavern's folder; the real path gives the same module URL the server imported.
        const file = fs.realpathSync(path.join(serverRoot, 'src', 'endpoints', 'chats.js'));
        ({ router } = await import(pathToFileURL(file).href));
    } catch (error) {
        return { installed: false, reason: `cannot load SillyTavern's chats router: ${error.message}` };
    }
    if (typeof router?.use !== 'function' || !Array.isArray(router.stack)) {
        return { installed: false, reason: 'SillyTavern\'s chats router has an unexpected shape' };
    }

    const watchSaves = (request, response, next) => {
        const kind = request.method === 'POST' ? SAVE_PATHS[request.path] : undefined;
        if (kind) {
            response.once('finish', () => {
                if (response.statusCode !== 200) return;
                // After the answer has gone out, and away from the request's own call stack.
                setImmediate(() => {
                    try {
                        onSave(kind, request);
                    } catch (error) {
                        log.warn(`[jiyi] write-on-save failed: ${error.message}`);
                    }
                });
            });
        }
        next();
    };
    router.use(watchSaves);
    // router.use appended the layer; move it first so it sees saves before the route answers them.
    const layer = router.stack.pop();
    if (layer?.handle !== watchSaves) {
        if (layer) router.stack.push(layer);
        return { installed: false, reason: 'could not place the save watcher in SillyTavern\'s chats router' };
    }
    router.stack.unshift(layer);
    return { installed: true };
}

/** Take the watcher out again (plugin exit). */
export async function unhookChatSaves({ serverRoot = process.cwd() } = {}) {
    try {
        const file = fs.realpathSync(path.join(serverRoot, 'src', 'endpoints', 'chats.js'));
        const { router } = await import(pathToFileURL(file).href);
        router.stack = router.stack.filter(layer => layer.handle?.name !== 'watchSaves');
    } catch {
        // nothing was installed
    }
}

// Whether a user has switched jiyi Memory off in the extension's settings panel ("Use long-term memory"). The
// switch lives in the browser's settings, which SillyTavern saves to data/<handle>/settings.json; the plugin reads
// it there so that "off" also stops the writes on chat save. Re-read only when the file changes.

import fs from 'node:fs/promises';
import path from 'node:path';

export class UserSettings {
    constructor() {
        this.cache = new Map();  // file -> {mtimeMs, enabled}
    }

    /** False only when the user turned memory off; true when on, never set, or unreadable. */
    async memoryEnabled(userRoot) {
        const file = path.join(userRoot, 'settings.json');
        try {
            const { mtimeMs } = await fs.stat(file);
            const cached = this.cache.get(file);
            if (cached && cached.mtimeMs === mtimeMs) return cached.enabled;
            const settings = JSON.parse(await fs.readFile(file, 'utf8'));
            const enabled = settings?.extension_settings?.jiyi_memory?.enabled !== false;
            this.cache.set(file, { mtimeMs, enabled });
            return enabled;
        } catch {
            return true;
        }
    }
}

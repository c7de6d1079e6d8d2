// Where the plugin keeps its turn ledger: one JSON file per SillyTavern user, in that user's data folder
// (data/<handle>/jiyi-memory/ledger.json), so it follows the user's data (backups, --dataRoot) and never lands in the
// plugin folder, which may be a symlink into a source checkout. It is kept in memory and written after each change;
// losing it only means a turn may be written twice (jiyi's extraction then finds nothing new: NONE).

import fs from 'node:fs/promises';
import path from 'node:path';

export class LedgerFiles {
    constructor({ log = console } = {}) {
        this.log = log;
        this.users = new Map();  // file path -> {chats: object, loaded: Promise, writing: Promise}
    }

    /** A {loadState, saveState} pair for one user's ledger file, as TurnLedger wants it. */
    forUser(userRoot) {
        const file = path.join(userRoot, 'jiyi-memory', 'ledger.json');
        return {
            loadState: async chatKey => (await this.#open(file)).chats[chatKey] ?? null,
            saveState: async (chatKey, state) => {
                const user = await this.#open(file);
                user.chats[chatKey] = state;
                user.writing = user.writing.then(() => this.#write(file, user.chats));
                await user.writing;
            },
        };
    }

    #open(file) {
        let user = this.users.get(file);
        if (!user) {
            user = { chats: {}, writing: Promise.resolve(), loaded: null };
            user.loaded = fs.readFile(file, 'utf8')
                .then(text => { user.chats = JSON.parse(text).chats ?? {}; })
                .catch(error => {
                    if (error.code !== 'ENOENT') this.log.warn(`[jiyi] starting a new ledger, could not read ${file}: ${error.message}`);
                })
                .then(() => user);
            this.users.set(file, user);
        }
        return user.loaded;
    }

    async #write(file, chats) {
        try {
            await fs.mkdir(path.dirname(file), { recursive: true });
            const temporary = `${file}.${process.pid}.tmp`;
            await fs.writeFile(temporary, JSON.stringify({ v: 1, chats }));
            await fs.rename(temporary, file);  // atomic: a crash never leaves half a file
        } catch (error) {
            this.log.warn(`[jiyi] could not save the ledger ${file}: ${error.message}`);
        }
    }
}

// Drives mem0's npm client (mem0ai 3.3.1) against a running jiyi server for mem0's categories and user profiles, and
// prints one JSON object: what each call returned, or what it threw. tests/server/test_mem0_sdk_js_profiles.py starts
// the server, runs this script and checks the results.
//
//   node drive_profiles.mjs --url URL --alice-key KEY --bob-key KEY --hook-url URL
//
// --hook-url: a receiver for the memory_categorize webhook the script registers (the test reads what it got).
//
// loopback.mjs first: telemetry off before the import, and any request off this machine refused and listed.
import { parseArgs } from "node:util";

import { blocked, sdk } from "./loopback.mjs";
import { recorder } from "./record.mjs";

const { MemoryClient } = sdk;

const { values: args } = parseArgs({
  options: { url: { type: "string" }, "alice-key": { type: "string" }, "bob-key": { type: "string" },
    "hook-url": { type: "string" } },
});
for (const name of ["url", "alice-key", "bob-key", "hook-url"]) {
  if (!args[name]) throw new Error(`drive_profiles.mjs: --${name} is required`);
}

const out = {};

const { call } = recorder(out, ["MemoryNotFoundError", "AuthenticationError", "ValidationError", "MemoryError"]);

const alice = new MemoryClient({ apiKey: args["alice-key"], host: args.url });
const bob = new MemoryClient({ apiKey: args["bob-key"], host: args.url });

// --- categories: assigned to every memory, filtered on, a custom list on an add -----------------------------------
for (const text of ["User loves spicy Sichuan food", "用户春节要去三亚度假", "用户有哮喘，一直在吃药",
  "User's name is Alice"]) {
  await call(`add:${text}`, () => alice.add([{ role: "user", content: text }], { userId: "alice", infer: false }));
}
await call("addCustom", () => alice.add([{ role: "user", content: "User has a golden retriever named Max" }],
  { userId: "alice", infer: false, customCategories: [{ pets: "the user's pets" }, { work: "job and career" }] }));
await call("getAll", () => alice.getAll({ filters: { user_id: "alice" } }));
await call("getAllFood", () => alice.getAll({ filters: { AND: [{ user_id: "alice" }, { categories: { in: ["food"] } }] } }));
await call("searchHealth", () => alice.search("what should I remember about her",
  { filters: { user_id: "alice" }, categories: ["health"] }));

// --- profiles -----------------------------------------------------------------------------------------------------
await call("settingsBefore", () => alice.getProfileSettings());
await call("profile", () => alice.getProfile({ entityId: "alice" }));
const job = await call("generate", () => alice.generateProfile({ entityId: "alice", idempotencyKey: "alice-1-key" }));
await call("generateAgain", () => alice.generateProfile({ entityId: "alice", idempotencyKey: "alice-1-key" }));
await call("job", () => alice.getProfileJob(job?.statusUrl));
await call("sample", () => alice.sampleProfiles({ limit: 3 }));
await call("updateSettings", () => alice.updateProfileSettings({
  schema: { type: "object", properties: {
    favourite_foods: { type: "array", items: { type: "string" }, description: "dishes and drinks the user loves" },
    home_city: { type: "string", description: "the city where the user lives" } } },
  customInstructions: "Short answers.",
}));
await call("settingsAfter", () => alice.getProfileSettings());
await call("profileWithSchema", () => alice.getProfile({ entityId: "alice" }));
await call("otherUsersProfile", () => alice.getProfile({ entityId: "bob" }));
await call("unknownUser", () => bob.getProfile({ entityId: "bob" }));
await call("disable", () => alice.updateProfileSettings({ enabled: false }));
await call("profileDisabled", () => alice.getProfile({ entityId: "alice" }));
await call("generateDisabled", () => alice.generateProfile({ entityId: "alice" }));

// --- the project's own categories, and the memory_categorize webhook (last: they change every later add) ---------
await call("webhook", () => alice.createWebhook({ name: "categories", url: args["hook-url"],
  eventTypes: ["memory_categorize"] }));
await call("updateProjectCategories", () => alice.updateProject({
  customCategories: [{ pets: "the user's pets" }, { work: "job, employer and colleagues" }] }));
await call("projectCategories", () => alice.getProject({ fields: ["customCategories"] }));
const cat = await call("addInProjectCategories", () => alice.add([{ role: "user", content: "User has a cat named Mochi" }],
  { userId: "alice", infer: false }));
await call("getInProjectCategories", () => alice.get(cat?.results?.[0]?.id));

out.blockedRequests = blocked;
console.log(JSON.stringify(out));

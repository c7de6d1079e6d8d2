// Drives mem0's npm client (mem0ai 3.3.1, `new MemoryClient({apiKey, host})`) against a running jiyi server and prints
// one JSON object: what each call returned, or what it threw (class name, message). tests/server/test_mem0_sdk_js.py
// starts the servers, runs this script and checks the results.
//
//   node drive.mjs --url URL --admin-key KEY --alice-key KEY --bob-key KEY --limited-url URL --limited-key KEY
//
// The client talks to `--url` as alice (a user key), bob and the admin; `--limited-url` is a server with a small
// rate limit, for the 429. Only loopback addresses may be fetched (the client sends every request with fetch; its
// axios instance is never used): the SDK's telemetry is off (MEM0_TELEMETRY=false, read when the module loads, so it
// is set before the import), and any other address is refused and listed in `blockedRequests`, which the test
// requires to be empty.
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";

import { blocked, sdk } from "./loopback.mjs";
import { recorder } from "./record.mjs";

const { MemoryClient } = sdk;

const { values: args } = parseArgs({
  options: {
    url: { type: "string" },
    "admin-key": { type: "string" },
    "alice-key": { type: "string" },
    "bob-key": { type: "string" },
    "limited-url": { type: "string" },
    "limited-key": { type: "string" },
  },
});
for (const name of ["url", "admin-key", "alice-key", "bob-key", "limited-url", "limited-key"]) {
  if (!args[name]) throw new Error(`drive.mjs: --${name} is required`);
}

const installed = new URL("./node_modules/mem0ai/package.json", import.meta.url);
const out = { sdkVersion: JSON.parse(readFileSync(installed, "utf8")).version };

const { call, thrown } = recorder(out, ["MemoryNotFoundError", "AuthenticationError", "RateLimitError",
  "MemoryQuotaExceededError", "ValidationError", "NetworkError", "MemoryError"]);

const client = (apiKey, host = args.url) => new MemoryClient({ apiKey, host });
const alice = client(args["alice-key"]);
const bob = client(args["bob-key"]);
const admin = client(args["admin-key"]);

// --- identity: the constructor pings; the project the ping named is what getProject / updateProject use ------------
await call("ping", async () => {
  await alice.ping();
  return { organizationId: alice.organizationId, projectId: alice.projectId };
});

// --- add ------------------------------------------------------------------------------------------------------------
const raw = await call("addRaw", () => alice.add(
  [{ role: "user", content: "I keep a bonsai on my desk" }, { role: "user", content: "I play go on Sundays" }],
  { userId: "alice", infer: false, metadata: { source: "drive.mjs" } }));
await call("addBob", () => bob.add([{ role: "user", content: "I collect stamps" }], { userId: "bob", infer: false }));

const queued = await call("addInfer", () => alice.add(
  [{ role: "user", content: "I live in Hangzhou and I drink oolong tea every morning. My sister is called Lin." }],
  { userId: "alice" }));
const eventId = queued?.results?.[0]?.eventId;
await call("event", async () => {
  // The SDK has no method for this: the platform's documented poll of GET /v1/event/{id}/, done with fetch.
  const deadline = Date.now() + 20_000;
  let event;
  do {
    const response = await fetch(`${args.url}/v1/event/${eventId}/`,
      { headers: { Authorization: `Token ${args["alice-key"]}` } });
    if (!response.ok) throw new Error(`GET /v1/event/${eventId}/: ${response.status} ${await response.text()}`);
    event = await response.json();
    if (event.status === "SUCCEEDED" || event.status === "FAILED") return event;
    await new Promise((resolve) => setTimeout(resolve, 100));
  } while (Date.now() < deadline);
  throw new Error(`event ${eventId} still ${event.status} after 20 s`);
});

// --- read -----------------------------------------------------------------------------------------------------------
await call("getAllPage1", () => alice.getAll({ filters: { user_id: "alice" }, page: 1, pageSize: 3 }));
await call("getAllPage2", () => alice.getAll({ filters: { user_id: "alice" }, page: 2, pageSize: 3 }));
await call("search", () => alice.search("What tea does she drink?",
  { filters: { AND: [{ user_id: "alice" }] }, topK: 3 }));
const teaId = out.search?.results?.[0]?.id;
const [bonsaiId, goId] = (raw?.results ?? []).map((item) => item.id);
await call("get", () => alice.get(bonsaiId));

// --- change ---------------------------------------------------------------------------------------------------------
await call("update", () => alice.update(teaId, { text: "User drinks green tea every morning",
  metadata: { changed_by: "drive.mjs" } }));
await call("history", () => alice.history(teaId));
await call("batchUpdate", () => alice.batchUpdate([
  { memoryId: bonsaiId, text: "I keep two bonsai trees on my desk" },
  { memoryId: goId, text: "I play go on Saturdays" },
]));
await call("afterBatchUpdate", async () => [(await alice.get(bonsaiId)).memory, (await alice.get(goId)).memory]);
await call("feedback", () => alice.feedback({ memoryId: bonsaiId, feedback: "POSITIVE",
  feedbackReason: "accurate" }));

// --- entities, exports, project -------------------------------------------------------------------------------------
await call("usersAlice", () => alice.users());
await call("usersAdmin", () => admin.users());
const exported = await call("createMemoryExport", () => alice.createMemoryExport({
  schema: { type: "object", properties: { memories: { type: "array" } } }, filters: { user_id: "alice" },
  exportInstructions: "one line per memory" }));
await call("getMemoryExport", () => alice.getMemoryExport({ memoryExportId: exported?.id }));
await call("getMemoryExportByFilters", () => alice.getMemoryExport({ filters: { user_id: "alice" } }));
await call("getProjectBefore", () => alice.getProject({ fields: ["customInstructions", "customCategories"] }));
await call("updateProject", () => alice.updateProject({ customInstructions: "Remember what alice drinks." }));
await call("getProjectAfter", () => alice.getProject({ fields: ["customInstructions"] }));

// --- errors ---------------------------------------------------------------------------------------------------------
await call("getMissing", () => alice.get("00000000-0000-4000-8000-000000000000"));
await call("getOtherUsersMemory", () => alice.get(out.addBob?.results?.[0]?.id));
await call("getAllOtherUser", () => alice.getAll({ filters: { user_id: "bob" } }));
await call("unknownKey", () => client("not-a-key").getAll({ filters: { user_id: "alice" } }));
await call("tooLarge", () => alice.add([{ role: "user", content: "x".repeat(70_000) }],
  { userId: "alice", infer: false }));
await call("rateLimited", async () => {
  const limited = client(args["limited-key"], args["limited-url"]);
  const answered = [];
  for (let n = 0; n < 10; n += 1) {
    try {
      answered.push((await limited.getAll({ filters: { user_id: "alice" } })).count);
    } catch (error) {
      return { answeredBefore: answered.length, ...thrown(error) };
    }
  }
  return { answeredBefore: answered.length, error: null };
});

// --- delete ---------------------------------------------------------------------------------------------------------
await call("batchDelete", () => alice.batchDelete([goId]));
await call("getBatchDeleted", () => alice.get(goId));
await call("delete", () => alice.delete(bonsaiId));
await call("getDeleted", () => alice.get(bonsaiId));
await call("deleteAll", () => alice.deleteAll({ userId: "alice" }));
await call("getAllAfterDeleteAll", () => alice.getAll({ filters: { user_id: "alice" } }));
await call("addAgent", () => admin.add([{ role: "user", content: "I answer in haiku" }],
  { agentId: "poet", infer: false }));
await call("usersAfterDeleteAll", () => admin.users());
await call("deleteUser", () => admin.deleteUser({ entity_type: "agent", entity_id: "poet" }));
await call("deleteUsers", () => bob.deleteUsers({ userId: "bob" }));
await call("usersAfterDeleteUsers", () => admin.users());

// --- where a new user used to trip (issue 31) ------------------------------------------------------------------------
const MOCHI = "https://example.com/mochi.png";
const planned = await call("edgeAddScoped", () => alice.add([{ role: "user", content: "I work at a bank in Lyon" }],
  { userId: "alice", agentId: "planner", runId: "r1", appId: "myapp", metadata: { topic: "work" }, infer: false }));
await call("edgeAddString", () => alice.add("I cook on the river bank",
  { userId: "alice", metadata: { topic: "food" }, infer: false }));
await call("edgeAddBob", () => bob.add([{ role: "user", content: "I collect coins" }],
  { userId: "bob", agentId: "planner", infer: false }));
await call("edgeSearchNested", () => alice.search("bank",
  { filters: { user_id: "alice", metadata: { topic: "work" } } }));
await call("edgeGetAllNested", () => alice.getAll(
  { filters: { AND: [{ user_id: "alice" }, { metadata: { topic: { in: ["food", "travel"] } } }] } }));
const plannedId = planned?.results?.[0]?.id;
await call("edgeUpdateMetadata", () => alice.update(plannedId, { metadata: { topic: "job" } }));
await call("edgeGetAfterUpdate", () => alice.get(plannedId));
await call("edgeImage", () => alice.add([{ role: "user", content: { type: "image_url", image_url: { url: MOCHI } } }],
  { userId: "alice", infer: false }));
await call("edgeImageCaption", () => alice.add([{ role: "user",
  content: { type: "image_url", image_url: { url: MOCHI }, caption: "my cat Mochi asleep on the sofa" } }],
  { userId: "alice", infer: false }));
await call("edgeTopKZero", () => alice.search("bank", { filters: { user_id: "alice" }, topK: 0 }));
await call("edgeAdminAdd", () => admin.add([{ role: "user", content: "I write poems at night" }],
  { userId: "carol", agentId: "scribe", runId: "s1", infer: false }));
await call("edgeDeleteUsersAlice", () => alice.deleteUsers());  // reset: her user, her planner, her run
await call("edgeUsersAliceAfter", () => alice.users());
await call("edgeUsersAdminBefore", () => admin.users());
await call("edgeDeleteUsersAdmin", () => admin.deleteUsers());  // users first: their agents and runs go with them
await call("edgeUsersAdminAfter", () => admin.users());
// One entity at a time: deleteUser (the v1 route) hands back jiyi's answer, what went; deleteUsers({ agentId })
// deletes an agent its user's deletion already emptied, without an error.
await call("edgeAdminAddDora", () => admin.add([{ role: "user", content: "I review films" }],
  { userId: "dora", agentId: "critic", runId: "d1", infer: false }));
await call("edgeDeleteUserDora", () => admin.deleteUser({ entity_type: "user", entity_id: "dora" }));
await call("edgeDeleteUserRunAfter", () => admin.deleteUser({ entity_type: "run", entity_id: "d1" }));
await call("edgeDeleteUsersAgentAfter", () => admin.deleteUsers({ agentId: "critic" }));
await call("edgeUsersAfterDora", () => admin.users());

out.blockedRequests = blocked;
console.log(JSON.stringify(out));

// What every driver of mem0's npm client does first: the SDK's telemetry off (MEM0_TELEMETRY=false is read when the
// module loads, so it is set before the import), and only loopback addresses fetched — the client sends every request
// with fetch; any other address is refused and listed in `blocked`, which the tests require to be empty.
process.env.MEM0_TELEMETRY = "false";

export const blocked = [];
const realFetch = globalThis.fetch;
globalThis.fetch = (input, init) => {
  const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
  if (!["127.0.0.1", "localhost", "[::1]"].includes(url.hostname)) {
    blocked.push(url.href);
    return Promise.reject(new Error(`refused a request off this machine: ${url.href}`));
  }
  return realFetch(input, init);
};

export const sdk = await import("mem0ai");

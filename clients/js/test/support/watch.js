// What a connection showed its user, recorded so a test can check "each version once, in order".

import assert from "node:assert/strict";

export function record(conn) {
  const seen = { versions: [], eventVersions: [], errors: [], states: [] };
  conn.on("change", ({ version, events }) => {
    seen.versions.push(version);
    seen.eventVersions.push(...events.map((event) => event.version));
  });
  conn.on("error", (error) => seen.errors.push(error));
  conn.on("connection", ({ state, code }) => seen.states.push({ state, code }));
  return seen;
}

/** Strictly increasing, and the events are exactly those the log shows this viewer. */
export function assertOnceInOrder(seen, logVersions) {
  for (let i = 1; i < seen.versions.length; i++) {
    assert.ok(seen.versions[i] > seen.versions[i - 1], `change versions not increasing: ${seen.versions.slice(i - 2, i + 1)}`);
  }
  const start = logVersions.indexOf(seen.eventVersions[0]);
  assert.ok(start >= 0, `the first event seen (${seen.eventVersions[0]}) is not in the log`);
  assert.deepEqual(seen.eventVersions, logVersions.slice(start), "events seen differ from the log (lost, doubled or out of order)");
}

export async function logVersions(client, gameId, token) {
  const versions = [];
  for await (const event of client.allEvents(gameId, { token })) versions.push(event.version);
  return versions;
}

export async function waitFor(predicate, timeoutMs = 10_000, what = "condition") {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Create a game and take every seat; the tokens in seat order. */
export async function seatedGame(client, game, seats, options = {}) {
  const { id } = await client.createGame({ game, seats, options });
  const tokens = [];
  for (let i = 0; i < seats; i++) tokens.push((await client.takeSeat(id, { name: `p${i}` })).token);
  return { id, tokens };
}

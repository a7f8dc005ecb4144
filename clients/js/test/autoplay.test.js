// playFromLegal's default choice, on a stand-in connection that offers undo beside a move.
import assert from "node:assert/strict";
import { test } from "node:test";

import { playFromLegal } from "../src/index.js";

function connectionOffering(rounds) {
  const listeners = { change: [], error: [] };
  const sent = [];
  const conn = {
    status: "active",
    version: 1,
    legal: [{ type: "undo", args: {} }, { type: "move", args: {} }],
    ready: Promise.resolve(),
    on(type, fn) {
      listeners[type].push(fn);
      return () => listeners[type].splice(listeners[type].indexOf(fn), 1);
    },
    async send(command) {
      sent.push(command.type);
      conn.version += 1;
      if (sent.length === rounds) conn.status = "finished";
      else if (sent.length === rounds - 1) conn.legal = [{ type: "undo", args: {} }];
      queueMicrotask(() => listeners.change.forEach((fn) => fn()));
      return { version: conn.version };
    },
  };
  return { conn, sent };
}

test("the default choice takes no move back unless undo is all there is", async () => {
  const { conn, sent } = connectionOffering(40);
  await playFromLegal(conn);
  assert.equal(sent.length, 40);
  assert.deepEqual(sent.slice(0, 39), Array(39).fill("move"));
  assert.equal(sent[39], "undo");
});

// The msgpack codec: round trips, the exact bytes Python's msgpack writes (the server's codec),
// and a live game over the donjon.msgpack subprotocol that shows what a JSON socket shows.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { after, before, describe, test } from "node:test";

import { DonjonClient, msgpack } from "../src/index.js";
import { DonjonServer, PYTHON } from "./support/server.js";
import { seatedGame, waitFor } from "./support/watch.js";

const SAMPLES = [
  null, true, false, 0, 1, 127, 128, 255, 256, 65535, 65536, 2 ** 32 - 1, 2 ** 32, Number.MAX_SAFE_INTEGER,
  -1, -32, -33, -128, -129, -32768, -32769, -(2 ** 31), -(2 ** 31) - 1, Number.MIN_SAFE_INTEGER,
  0.5, -1.25, 1e300, "", "a", "x".repeat(31), "x".repeat(32), "y".repeat(255), "z".repeat(256), "é€😀".repeat(30000),
  [], [1, [2, [3]]], Array.from({ length: 15 }, (_, i) => i), Array.from({ length: 16 }, (_, i) => i),
  Array.from({ length: 70000 }, (_, i) => i % 3),
  {}, { a: 1, b: { c: [null, "d"] } }, Object.fromEntries(Array.from({ length: 16 }, (_, i) => [`k${i}`, i])),
];

/** Python's msgpack (the server's) packs each JSON sample: hex, one a line. */
function pythonPacked(samples) {
  const script = [
    "import json, sys, msgpack",
    "for value in json.load(sys.stdin):",
    "    print(msgpack.packb(value, use_bin_type=True).hex())",
  ].join("\n");
  return execFileSync(PYTHON, ["-c", script], { input: JSON.stringify(samples), maxBuffer: 1 << 26 })
    .toString()
    .trim()
    .split("\n");
}

const hex = (bytes) => Buffer.from(bytes).toString("hex");

describe("msgpack", () => {
  test("round trips", () => {
    for (const value of SAMPLES) assert.deepEqual(msgpack.decode(msgpack.encode(value)), value);
    const bin = new Uint8Array([0, 1, 255]);
    assert.deepEqual(msgpack.decode(msgpack.encode(bin)), bin);
    assert.equal(msgpack.decode(msgpack.encode(2n ** 63n)), 2n ** 63n);
    assert.equal(msgpack.decode(msgpack.encode(-(2n ** 63n))), -(2n ** 63n));
    assert.deepEqual(msgpack.decode(msgpack.encode({ a: undefined, b: 1 })), { b: 1 });
  });

  test("the same bytes as Python's msgpack, both ways", { timeout: 30_000 }, () => {
    const packed = pythonPacked(SAMPLES);
    assert.equal(packed.length, SAMPLES.length);
    for (const [i, value] of SAMPLES.entries()) {
      assert.equal(hex(msgpack.encode(value)), packed[i], `sample ${i}`);
      assert.deepEqual(msgpack.decode(Buffer.from(packed[i], "hex")), value, `sample ${i}`);
    }
  });

  test("refuses what is not one whole value", () => {
    assert.throws(() => msgpack.decode(new Uint8Array([0x92, 0x01])), RangeError);
    assert.throws(() => msgpack.decode(new Uint8Array([0x01, 0x02])), RangeError);
    assert.throws(() => msgpack.decode(new Uint8Array([0xc1])), TypeError);
    assert.throws(() => msgpack.decode(new Uint8Array([0xa2, 0xff, 0xfe])), TypeError);
    assert.throws(() => msgpack.encode(() => 1), TypeError);
  });

  describe("over the donjon.msgpack subprotocol", () => {
    let server;
    before(async () => {
      server = await new DonjonServer().start();
    });
    after(() => server?.dispose());

    test("a msgpack socket shows what a JSON socket shows", { timeout: 30_000 }, async () => {
      const client = new DonjonClient(server.url);
      const { id, tokens } = await seatedGame(client, "castle", 2);
      const packed = client.connect(id, { token: tokens[0], codec: "msgpack" });
      const plain = client.connect(id, { token: tokens[0], codec: "json" });
      const frames = { packed: [], plain: [] };
      packed.on("change", ({ frame }) => frames.packed.push(frame));
      plain.on("change", ({ frame }) => frames.plain.push(frame));
      await Promise.all([packed.ready, plain.ready]);
      for (let i = 0; i < 6 && packed.legal.length; i++) {
        const ack = await packed.send(packed.legal[0], { expectedVersion: packed.version });
        await waitFor(() => packed.version >= ack.version && plain.version >= ack.version, 5000, "both updates");
      }
      assert.ok(frames.packed.length > 1);
      assert.deepEqual(frames.packed, frames.plain);
      packed.close();
      plain.close();
    });
  });
});

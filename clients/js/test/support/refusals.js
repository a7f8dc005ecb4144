// How the suites check a refusal: the promise rejects with a DonjonError of that code.

import assert from "node:assert/strict";

import { DonjonError } from "../../src/index.js";

/** Awaits ``promise``'s rejection: a DonjonError with ``code`` and each ``extra`` field; the error. */
export async function rejectsWith(promise, code, extra = {}) {
  let refused;
  await assert.rejects(promise, (error) => {
    assert.ok(error instanceof DonjonError, `not a DonjonError: ${error}`);
    assert.equal(error.code, code, error.message);
    for (const [key, value] of Object.entries(extra)) assert.equal(error[key], value, key);
    refused = error;
    return true;
  });
  return refused;
}

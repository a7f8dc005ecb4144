// The tests' shape checks are the contract itself: what the server really sends is validated
// against the JSON Schemas of service/contract/openapi.json (bodies) and asyncapi.json (frames),
// the one hand-written copy of the wire's shapes, so a frame or route that changes without its
// document fails the tests (and src/index.d.ts is held to the same schemas by contract.test.js).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

import Ajv2020 from "ajv/dist/2020.js";

const CONTRACT = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..", "service", "contract");
/** Where the two documents notionally live side by side: asyncapi.json's `openapi.json#/...` resolve here. */
const BASE = "https://donjon.invalid/";

export const document = (name) => JSON.parse(readFileSync(join(CONTRACT, name), "utf8"));

// strict off: the documents carry OpenAPI/AsyncAPI keywords beside the schemas (paths, channels)
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
for (const name of ["openapi.json", "asyncapi.json"]) ajv.addSchema(document(name), BASE + name);

const validators = new Map();
/** The validator of `schema`, a name of openapi.json's components/schemas (or asyncapi.json's: `asyncapi:Name`). */
function validatorOf(schema) {
  if (!validators.has(schema)) {
    const [file, name] = schema.startsWith("asyncapi:") ? ["asyncapi.json", schema.slice(9)] : ["openapi.json", schema];
    const validate = ajv.getSchema(`${BASE}${file}#/components/schemas/${name}`);
    assert.ok(validate, `the contract has no schema ${schema}`);
    validators.set(schema, validate);
  }
  return validators.get(schema);
}

/** Assert `value` is a `schema` of the contract (e.g. "Game", "Seated", "asyncapi:Snapshot"). */
export function assertShape(schema, value) {
  const validate = validatorOf(schema);
  const errors = validate(value) ? [] : validate.errors;
  const details = errors.slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message}`).join("; ");
  assert.equal(errors.length, 0, `not a ${schema} of the contract: ${details}\n${JSON.stringify(value).slice(0, 400)}`);
}

/** Assert `frame` is a server frame of asyncapi.json (its own type's schema first, for a readable failure). */
export function assertFrame(frame) {
  const own = { snapshot: "Snapshot", update: "Update", ack: "Ack", error: "ErrorFrame" }[frame?.type];
  assert.ok(own, `asyncapi.json has no server frame of type ${frame?.type}`);
  assertShape(`asyncapi:${own}`, frame);
  assertShape("asyncapi:ServerFrame", frame);
}

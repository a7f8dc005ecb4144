// The contract as generators see it: openapi-typescript generates types from openapi.json (and
// from asyncapi.json's frames beside its schemas) into a temporary folder, never the repository;
// the generated types have no `never` or `unknown` where the contract has a real type; strict tsc
// compiles a usage of them (test/generated-usage.ts) and holds src/index.d.ts to them both ways
// (test/contract-types.ts). @asyncapi/parser reads asyncapi.json with no error or warning.

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";

import { Parser, fromFile } from "@asyncapi/parser";
import openapiTS, { astToString } from "openapi-typescript";

import { document } from "./support/shapes.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const PACKAGE = join(HERE, "..");
const CONTRACT = join(PACKAGE, "..", "..", "service", "contract");
const OPENAPI = document("openapi.json");
const ASYNCAPI = document("asyncapi.json");

let folder;
const generated = {};

/** openapi.json with asyncapi.json's schemas beside its own (their `openapi.json#` references made local). */
function withFrames() {
  const frames = JSON.parse(JSON.stringify(ASYNCAPI.components.schemas).replaceAll('"openapi.json#/', '"#/'));
  const clash = Object.keys(frames).filter((name) => name in OPENAPI.components.schemas);
  assert.deepEqual(clash, [], "asyncapi.json and openapi.json name a schema alike");
  return { ...OPENAPI, components: { ...OPENAPI.components, schemas: { ...OPENAPI.components.schemas, ...frames } } };
}

before(async () => {
  folder = mkdtempSync(join(tmpdir(), "donjon-contract-"));
  generated.openapi = astToString(await openapiTS(OPENAPI));
  generated.wire = astToString(await openapiTS(withFrames()));
  writeFileSync(join(folder, "openapi.d.ts"), generated.openapi);
  writeFileSync(join(folder, "generated.d.ts"), generated.wire);
  for (const file of ["generated-usage.ts", "contract-types.ts"]) copyFileSync(join(HERE, file), join(folder, file));
  writeFileSync(join(folder, "package.json"), JSON.stringify({ type: "module" }));
});

after(() => rmSync(folder, { recursive: true, force: true }));

/** The `schemas` of a generated file's `components`: every schema's type (its other members,
 * `parameters: never;` and the like, say that the document has none of those). */
function componentsOf(text) {
  const start = text.indexOf("export interface components {\n    schemas: {");
  assert.ok(start >= 0, "no components.schemas in the generated file");
  return text.slice(start, text.indexOf("\n    responses:", start));
}

test("the generated types have no never, and unknown only as the value of an open object's other fields", () => {
  for (const [name, text] of Object.entries(generated)) {
    const lines = componentsOf(text).split("\n");
    assert.ok(lines.length > 100, `${name}: no components in the generated file`);
    const never = lines.filter((line) => /\bnever\b/.test(line));
    assert.deepEqual(never, [], `${name}: never where the contract has a type`);
    const unknown = lines.filter((line) => /\bunknown\b/.test(line) && !/^\s*\[key: string\]: unknown;$/.test(line));
    assert.deepEqual(unknown, [], `${name}: unknown where the contract has a type`);
    // elsewhere, Record<string, never> only for what is empty by design: no webhooks, no $defs, and
    // the rematch's request body, which must be `{}` when sent
    const empty = text.split("\n").filter((line) => line.includes("Record<string, never>"));
    assert.deepEqual(empty.map((line) => line.trim()), [
      "export type webhooks = Record<string, never>;", "export type $defs = Record<string, never>;",
      '"application/json": Record<string, never>;',
    ], `${name}: an object of nothing`);
  }
  assert.match(generated.openapi, /ErrorCode: "bad_json" \| "bad_frame"/);
  assert.match(generated.openapi, /clock\?: components\["schemas"\]\["FischerClock"\] \| components\["schemas"\]\["MoveClock"\] \| null;/);
});

test("strict tsc compiles a usage of the generated types and holds index.d.ts to them both ways", () => {
  writeFileSync(join(folder, "tsconfig.json"), JSON.stringify({
    compilerOptions: {
      target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022", "DOM"],
      strict: true, noEmit: true, skipLibCheck: false, types: [],
      paths: { "@donjon/client": [join(PACKAGE, "src", "index.d.ts")] },
    },
    files: ["openapi.d.ts", "generated.d.ts", "generated-usage.ts", "contract-types.ts"],
  }));
  const tsc = join(PACKAGE, "node_modules", "typescript", "bin", "tsc");
  try {
    execFileSync(process.execPath, [tsc, "-p", join(folder, "tsconfig.json")], { encoding: "utf8", stdio: "pipe" });
  } catch (error) {
    assert.fail(`tsc --strict refused:\n${error.stdout}${error.stderr}`);
  }
});

/** Schemas no client type pairs with, and why; every other one is paired in contract-types.ts or
 * reached from a paired one (a FischerClock within CreateGame). */
const UNPAIRED = {
  OpenApiDocument: "openapi() resolves with the document as a plain object",
  AsyncApiDocument: "asyncapi() resolves with the document as a plain object",
};
const isErrorVariant = (schema) => schema.allOf?.[0]?.$ref === "#/components/schemas/Error"; // a DonjonError's body

test("every schema of the contract is paired with a client type, or reached from one", () => {
  const schemas = withFrames().components.schemas;
  const paired = [...readFileSync(join(HERE, "contract-types.ts"), "utf8").matchAll(/S\["(\w+)"\]/g)].map((m) => m[1]);
  const reached = new Set();
  const visit = (node) => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (node === null || typeof node !== "object") return;
    const name = typeof node.$ref === "string" ? node.$ref.replace("#/components/schemas/", "") : null;
    if (name && !reached.has(name)) {
      reached.add(name);
      visit(schemas[name]);
    }
    Object.values(node).forEach(visit);
  };
  paired.forEach((name) => visit({ $ref: `#/components/schemas/${name}` }));
  const missing = Object.keys(schemas).filter((name) => !reached.has(name) && !(name in UNPAIRED) && !isErrorVariant(schemas[name]));
  assert.deepEqual(missing, [], "schemas src/index.d.ts is not held to (pair them in test/contract-types.ts)");
});

test("@asyncapi/parser reads asyncapi.json with no error and no warning", async () => {
  const { document: parsed, diagnostics } = await fromFile(new Parser(), join(CONTRACT, "asyncapi.json")).parse();
  const serious = diagnostics.filter((d) => d.severity <= 1); // 0 error, 1 warning (2 information, 3 hint)
  assert.deepEqual(serious.map((d) => `${d.code}: ${d.message} at ${d.path.join("/")}`), []);
  assert.ok(parsed, "the parser made no document");
  assert.equal(parsed.info().version(), OPENAPI.info.version);
  const messages = parsed.allMessages().all().map((message) => message.id()).sort();
  assert.deepEqual(messages, Object.keys(ASYNCAPI.components.messages).sort());
});

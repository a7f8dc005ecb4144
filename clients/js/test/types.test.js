// src/index.d.ts against service/contract/openapi.json: every field of every body the contract
// describes is declared (optional exactly where the contract does not require it), every route has
// a method, and the class the types declare is the class src/ exports. Read with the TypeScript
// compiler's own parser (the devDependency `tsc` runs with), so nothing is matched by hand. The
// fields' types are held to the contract by contract.test.js (the generated types, both ways).

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

import ts from "typescript";

import { DonjonClient } from "../src/index.js";

const HERE = dirname(fileURLToPath(import.meta.url));
const OPENAPI = JSON.parse(readFileSync(join(HERE, "..", "..", "..", "service", "contract", "openapi.json"), "utf8"));
const SOURCE = ts.createSourceFile("index.d.ts", readFileSync(join(HERE, "..", "src", "index.d.ts"), "utf8"),
  ts.ScriptTarget.Latest, true);

/** interface or class name -> {field: optional?} of what it declares (index signatures left out). */
function declared() {
  const shapes = {};
  for (const node of SOURCE.statements) {
    if (!ts.isInterfaceDeclaration(node) && !ts.isClassDeclaration(node)) continue;
    const fields = {};
    for (const member of node.members) {
      if (member.name && (ts.isPropertySignature(member) || ts.isMethodDeclaration(member) || ts.isPropertyDeclaration(member))) {
        fields[member.name.getText(SOURCE)] = Boolean(member.questionToken);
      }
    }
    shapes[node.name.getText(SOURCE)] = fields;
  }
  return shapes;
}

/** The string literals of a type alias's union (`ErrorCode`). */
function literals(alias) {
  const node = SOURCE.statements.find((s) => ts.isTypeAliasDeclaration(s) && s.name.text === alias);
  const found = [];
  const visit = (child) => {
    if (ts.isLiteralTypeNode(child) && ts.isStringLiteral(child.literal)) found.push(child.literal.text);
    ts.forEachChild(child, visit);
  };
  visit(node.type);
  return found;
}

const SCHEMAS = OPENAPI.components.schemas;

/** contract schema -> the interface that types it; client-side extras the interface may add. */
const TYPED = [
  [SCHEMAS.Seat, "SeatEntry"],
  [SCHEMAS.Command, "Command"],
  [SCHEMAS.View, "View"],
  [SCHEMAS.Event, "GameEvent"],
  [SCHEMAS.OptionSpec, "OptionSpec"],
  [SCHEMAS.CatalogEntry, "CatalogEntry"],
  [SCHEMAS.LobbyEntry, "LobbyEntry"],
  [SCHEMAS.Lobby, "ListGamesBody"],
  [SCHEMAS.Game, "GameBody"],
  [SCHEMAS.State, "StateBody"],
  [SCHEMAS.EventsPage, "EventsBody"],
  [SCHEMAS.GameAssets, "GameAssets"],
  [SCHEMAS.Export, "ExportBody"],
  [SCHEMAS.Clock, "Clock"],
  [SCHEMAS.Rematch, "RematchBody"],
  [SCHEMAS.Seated, "TakeSeatBody"],
  [SCHEMAS.CreateGame, "CreateGameRequest"],
  [SCHEMAS.TakeSeat, "TakeSeatRequest", ["token"]], // a rematch's old token: sent as Authorization
  [SCHEMAS.Error, "ErrorBody"],
  [SCHEMAS.FeatureSpec, "FeatureSpec"],
  [SCHEMAS.Health, "HealthBody"],
  [SCHEMAS.Keys, "KeysBody"],
  [SCHEMAS.Key, "NodeKey"],
  [SCHEMAS.Catalog, "CatalogBody"],
  [SCHEMAS.Created, "CreateGameBody"],
  [SCHEMAS.Ledger, "LedgerBody"],
  [SCHEMAS.LedgerEntry, "LedgerEntry"],
  [SCHEMAS.LedgerHead, "LedgerHead"],
  [SCHEMAS.LedgerPlace, "LedgerPlace"],
];
// ReadyBody, a union of the 200 and 503 answers, is held to Ready | NotReady by contract.test.js

test("every field of every body of the contract is declared, optional where the contract allows it", () => {
  const shapes = declared();
  for (const [schema, name, extras = []] of TYPED) {
    assert.ok(shapes[name], `src/index.d.ts declares no ${name}`);
    const fields = Object.keys(schema.properties ?? {});
    const required = new Set(schema.required ?? []);
    assert.deepEqual(Object.keys(shapes[name]).filter((f) => !extras.includes(f)).sort(), fields.sort(),
      `${name}: the fields of the contract's schema`);
    for (const field of fields) {
      assert.equal(shapes[name][field], !required.has(field),
        `${name}.${field} is ${shapes[name][field] ? "optional" : "required"} in the types, not in the contract`);
    }
  }
});

test("every error code of the contract is an ErrorCode", () => {
  const codes = SCHEMAS.ErrorCode.enum;
  assert.deepEqual(literals("ErrorCode").filter((c) => codes.includes(c)).sort(), [...codes].sort());
});

/** operationId -> the DonjonClient method for it; the web app's pages are for browsers, not a client. */
const METHODS = {
  healthz: "health", readyz: "ready", metrics: "metrics", openapi: "openapi", asyncapi: "asyncapi", keys: "keys",
  catalog: "catalog", getGameAssets: "gameAssets", listGames: "listGames", createGame: "createGame",
  takeSeat: "takeSeat", rematch: "rematch", getGame: "getGame", getEvents: "events", getState: "state",
  getExport: "exportGame", websocket: "connect", ledger: "ledger",
};
const PAGES = new Set(["appLobby", "appGame", "appStatic", "appClient"]);

test("every route of the contract has a typed method, and the client has each method it types", () => {
  const typed = declared().DonjonClient;
  for (const [route, item] of Object.entries(OPENAPI.paths)) {
    for (const operation of Object.values(item)) {
      if (PAGES.has(operation.operationId)) continue;
      const method = METHODS[operation.operationId];
      assert.ok(method, `${route} (${operation.operationId}): no DonjonClient method maps to it`);
      assert.ok(method in typed, `index.d.ts declares no DonjonClient.${method} for ${route}`);
    }
  }
  for (const method of Object.keys(typed)) {
    if (method === "baseUrl") continue;
    assert.equal(typeof DonjonClient.prototype[method], "function", `DonjonClient.${method} is typed but does not exist`);
  }
});

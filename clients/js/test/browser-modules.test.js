// src/ is served to browsers as static files with no bundler: every import must be relative,
// and no module may reach for Node's own modules or globals.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

const SRC = new URL("../src/", import.meta.url);

test("src/ modules import only relative files and use no Node-only globals", () => {
  const modules = readdirSync(SRC, { recursive: true }).filter((name) => name.endsWith(".js"));
  assert.ok(modules.length >= 5);
  for (const name of modules) {
    const text = readFileSync(new URL(name, SRC), "utf8");
    const specifiers = [...text.matchAll(/^\s*(?:import|export)\b[^"']*?from\s*["']([^"']+)["']/gm)].map((m) => m[1]);
    for (const specifier of specifiers) assert.match(specifier, /^\.\.?\//, `${name} imports ${specifier}`);
    assert.doesNotMatch(text, /\b(require\(|process\.|Buffer\b|__dirname)/, `${name} uses a Node-only global`);
  }
});

// A real `donjon serve` for the tests: embedded store, a fresh data dir, a free port, its own
// process group (so a test can SIGKILL exactly it and its embedded server, and start it again).

import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before } from "node:test";

import { DonjonClient } from "../../src/index.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "..");

/** The `donjon` on PATH (an active virtualenv), or null. */
function donjonOnPath() {
  for (const folder of (process.env.PATH ?? "").split(delimiter)) {
    const candidate = join(folder, "donjon");
    if (folder && existsSync(candidate) && spawnSync(candidate, ["--help"], { stdio: "ignore" }).status === 0) return candidate;
  }
  return null;
}

const DONJON = donjonOnPath();

/** `donjon` when it is on PATH, else `python3 -m service` from the repository. */
function serveCommand() {
  return DONJON ? [DONJON, []] : ["python3", ["-m", "service"]];
}

/** The Python that runs the service (its virtualenv's, beside `donjon`), for tests that need its packages. */
export const PYTHON = DONJON && existsSync(join(dirname(DONJON), "python3")) ? join(dirname(DONJON), "python3") : "python3";

export function freePort() {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once("error", reject);
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Process groups of the servers this test process started and that still run: a test file that
 * crashes or is forced to exit must not leave a detached server behind. */
const running = new Set();
process.on("exit", () => {
  for (const pid of running) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

export class DonjonServer {
  constructor({ env = {} } = {}) {
    // The data folder inside a folder of its own, so that its keys folder (donjon-keys, beside
    // the data folder) is this server's too and goes with it.
    this.folder = mkdtempSync(join(tmpdir(), "donjon-js-"));
    this.dataDir = join(this.folder, "donjon-data");
    this.env = env;
    this.child = null;
    this.port = null;
    this.output = "";
  }

  get url() {
    return `http://127.0.0.1:${this.port}`;
  }

  /** Start (or start again on the same data dir and port) and wait until /readyz says ready. */
  async start(timeoutMs = 30_000) {
    this.port ??= await freePort();
    const [command, prefix] = serveCommand();
    const args = [...prefix, "serve", "--host", "127.0.0.1", "--port", String(this.port), "--data-dir", this.dataDir];
    const child = spawn(command, args, {
      cwd: REPO,
      detached: true, // its own process group: kill() reaches it and its embedded server only
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, DONJON_LOG_FORMAT: "json", DONJON_WORKERS: "1", DONJON_LOG_LEVEL: process.env.DONJON_LOG_LEVEL ?? "warning", ...this.env },
    });
    this.child = child;
    const keep = (chunk) => {
      this.output = (this.output + chunk).slice(-20_000);
    };
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    running.add(child.pid);
    const exited = new Promise((resolve) => child.once("exit", resolve));
    exited.then(() => running.delete(child.pid));
    this.exited = exited;
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`donjon serve exited (${child.exitCode ?? child.signalCode}):\n${this.output}`);
      }
      try {
        const response = await fetch(`${this.url}/readyz`);
        if (response.status === 200) return this;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    this.kill();
    throw new Error(`donjon serve did not become ready in ${timeoutMs} ms:\n${this.output}`);
  }

  /** SIGKILL the server's process group (this server only) and wait for it to be gone. */
  async kill() {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // already gone
    }
    await this.exited;
  }

  /** Stop gracefully (SIGINT: sockets get 1001), falling back to SIGKILL. */
  async stop(timeoutMs = 10_000) {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    process.kill(-child.pid, "SIGINT");
    const timer = setTimeout(() => this.kill(), timeoutMs);
    await this.exited;
    clearTimeout(timer);
  }

  async dispose() {
    await this.stop();
    rmSync(this.folder, { recursive: true, force: true });
  }
}

/**
 * One `donjon serve` for the tests of the enclosing `describe` (with the settings of `env`):
 * started before them (then `use(server, client)` is called), stopped after them.
 */
export function serveForSuite(use, { clientPath = "", env = {} } = {}) {
  let server;
  before(async () => {
    server = await new DonjonServer({ env }).start();
    use(server, new DonjonClient(`${server.url}${clientPath}`));
  });
  after(() => server?.dispose());
}

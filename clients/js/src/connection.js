// GameConnection: one game's websocket, kept open across drops, with commands that survive them.
//
// The server's promise (docs/protocol.md): after a hello with `since`, every version after it
// arrives exactly once and in order. The client keeps the last version it applied, says hello
// with it on every reconnect, and drops any frame at or below it, so "change" fires once per
// version, strictly increasing, whatever the network did. Commands wait in `pending` until their
// ack or error; after a reconnect every pending command is sent again under its own id, which the
// server answers with a duplicate ack if it had applied it already.
//
// The service's own commands (`resign`, `undo`) are ordinary commands of this kind; a rematch
// the finished game links (`view.rematch`, the `game.rematch` event) fires "rematch" once.

import { TokenBucket } from "./bucket.js";
import { CLIENT_CODES, DonjonError, refuseUnknown } from "./errors.js";
import * as msgpack from "./msgpack.js";

export const MSGPACK_SUBPROTOCOL = "donjon.msgpack";

/** Close codes after which reconnecting would only repeat the client's own fault. */
const FATAL_CLOSE_CODES = new Set([1008, 1009]);
/** Close code 1011: the node cannot show this game now; try again, but not at once. */
const LATER_CLOSE_CODE = 1011;
/** Error codes after which a command is sent again, same id: nothing was applied, or a resend says. */
const RESEND_CODES = new Set(["rate_limited", "store_unavailable", "internal"]);
/** Errors answering a hello that a later hello may not get. */
const RETRY_HELLO_CODES = new Set(["rate_limited", "store_unavailable", "internal"]);

/** The service's own commands (docs/protocol.md, "Service commands beside the engine's"): no args. */
const RESIGN = Object.freeze({ type: "resign", args: {} });
const UNDO = Object.freeze({ type: "undo", args: {} });
const REMATCH_EVENT = "game.rematch";

/** The rematch a view frame links: its view's `rematch`, or a `game.rematch` among its events. */
function linkedRematch(frame) {
  const linking = frame.events?.find((event) => event.type === REMATCH_EVENT);
  return frame.view?.rematch ?? linking?.payload?.id ?? null;
}

/** How long an open socket's close may lag behind its error before the socket is given up. */
const CLOSE_AFTER_ERROR_MS = 2000;

const DEFAULTS = Object.freeze({
  // Below the server's documented 20 frames/s, burst 40 per socket (DONJON_WS_RATE, DONJON_WS_BURST).
  rate: 16,
  burst: 20,
  reconnect: { initialDelay: 200, maxDelay: 5000, factor: 2, jitter: 0.25 },
  maxResends: 8,
  maxFrame: 65536, // the server's default DONJON_WS_MAX_FRAME
});

/** The options of `connect` (anything else is refused, never ignored: a misspelt `token` would watch as a spectator). */
const CONNECT_OPTIONS = Object.freeze(["token", "since", "codec", "rate", "burst", "reconnect", "maxResends", "maxFrame"]);
const SEND_OPTIONS = Object.freeze(["expectedVersion", "id"]);

const utf8 = new TextEncoder();
const utf8Length = (text) => utf8.encode(text).byteLength;

const CODECS = {
  json: { protocols: [], encode: (frame) => JSON.stringify(frame), decode: (data) => JSON.parse(data) },
  msgpack: {
    protocols: [MSGPACK_SUBPROTOCOL],
    encode: (frame) => msgpack.encode(frame),
    decode: (data) => msgpack.decode(data instanceof ArrayBuffer ? new Uint8Array(data) : data),
  },
};

function randomPrefix() {
  const bytes = new Uint8Array(6);
  globalThis.crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Close a socket in whatever state it is; one that never opened may throw, and is dropped either way. */
function closeQuietly(socket, code, reason) {
  try {
    if (socket.readyState <= 1) socket.close(code, reason);
  } catch {
    // nothing more to do with it
  }
}

export class GameConnection extends EventTarget {
  /**
   * @param {import("./client.js").DonjonClient} client
   * @param {string} gameId
   * @param {{token?: string, since?: number, codec?: "json"|"msgpack", rate?: number, burst?: number,
   *          reconnect?: false | {initialDelay?: number, maxDelay?: number, factor?: number, jitter?: number},
   *          maxResends?: number, maxFrame?: number}} [options]
   */
  constructor(client, gameId, options = {}) {
    super();
    refuseUnknown("connect", options, CONNECT_OPTIONS);
    if (options.reconnect) refuseUnknown("connect's reconnect", options.reconnect, Object.keys(DEFAULTS.reconnect));
    const codecName = options.codec ?? "json";
    if (!CODECS[codecName]) throw new TypeError(`codec must be "json" or "msgpack", not ${codecName}`);
    this.client = client;
    this.gameId = gameId;
    this.token = options.token;
    this.codecName = codecName;
    this.codec = CODECS[codecName];
    this.reconnectPolicy = options.reconnect === false ? null : { ...DEFAULTS.reconnect, ...options.reconnect };
    this.maxResends = options.maxResends ?? DEFAULTS.maxResends;
    this.maxFrame = options.maxFrame ?? DEFAULTS.maxFrame;
    this.bucket = new TokenBucket(options.rate ?? DEFAULTS.rate, options.burst ?? DEFAULTS.burst);

    this.version = options.since ?? null;
    this.status = null;
    this.seats = [];
    this.seat = null;
    this.view = null;
    this.game = null;
    this.rematch = null;
    this.spectators = null; // the last `spectators` frame's count
    this.state = "connecting";

    this.idPrefix = randomPrefix();
    this.nextId = 1;
    /** @type {Map<string, {id: string, data: string | Uint8Array, resolve: Function, reject: Function, resends: number}>} */
    this.pending = new Map();
    this.outbox = []; // frames waiting for a token of the bucket, in order
    this.pumpTimer = null;
    this.retryTimer = null;
    this.socket = null;
    this.greeted = false;
    this.attempt = 0;
    this.closedForGood = false;

    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {}); // a caller that never awaits ready must not see an unhandled rejection
    this.open();
  }

  get legal() {
    return this.view?.legal ?? [];
  }

  /** Whether this seat may undo now: `legal` ends with `{type: "undo"}` exactly then. */
  get canUndo() {
    return this.legal.some((command) => command.type === UNDO.type);
  }

  /** Listen to "change", "connection", "rematch", "spectators" or "error"; `fn` gets event.detail. Returns the unsubscribe. */
  on(type, fn) {
    const listener = (event) => fn(event.detail);
    this.addEventListener(type, listener);
    return () => this.removeEventListener(type, listener);
  }

  emit(type, detail) {
    this.dispatchEvent(new CustomEvent(type, { detail }));
  }

  setState(state, extra = {}) {
    this.state = state;
    this.emit("connection", { state, attempt: this.attempt, code: extra.code ?? null, reason: extra.reason ?? "" });
  }

  // --- the socket --------------------------------------------------------------------------

  open() {
    if (this.closedForGood) return;
    this.greeted = false;
    this.outbox = [];
    let socket;
    try {
      socket = new this.client.WebSocket(this.client.socketUrl(this.gameId), this.codec.protocols);
    } catch (cause) {
      this.scheduleReconnect({ code: null, reason: String(cause) });
      return;
    }
    socket.binaryType = "arraybuffer";
    this.socket = socket;
    let opened = false;
    socket.addEventListener("open", () => {
      opened = true;
      if (this.socket === socket) this.onOpen();
    });
    socket.addEventListener("message", (event) => this.socket === socket && this.onMessage(event.data));
    socket.addEventListener("close", (event) => {
      if (this.socket !== socket) return;
      if (!opened) this.checkGameExists();
      this.onClose(event.code, event.reason);
    });
    socket.addEventListener("error", () => this.socket === socket && this.onSocketError(socket, opened));
  }

  /**
   * Browsers follow an error with a close that carries the code; Node 20's WebSocket does not
   * when the connection is refused (it stays CONNECTING), so a socket that never opened ends
   * here, and an open one if its close does not follow soon.
   */
  onSocketError(socket, opened) {
    if (opened) {
      setTimeout(() => this.socket === socket && this.abandon(socket), CLOSE_AFTER_ERROR_MS);
      return;
    }
    this.checkGameExists();
    this.abandon(socket);
  }

  /**
   * A socket refused before it opened says nothing (browsers show no HTTP status): ask the route,
   * so that a game that does not exist ends the connection with not_found instead of retrying.
   */
  checkGameExists() {
    this.client.getGame(this.gameId).then(
      () => {},
      (error) => error.code === "not_found" && !this.closedForGood && this.fail(error),
    );
  }

  abandon(socket) {
    this.onClose(1006, "connection failed"); // first: this.socket no longer names it, so its events are ignored
    closeQuietly(socket);
  }

  onOpen() {
    const hello = { type: "hello" };
    if (this.token) hello.token = this.token;
    if (this.version !== null) hello.since = this.version;
    this.queue(this.codec.encode(hello));
  }

  onClose(code, reason) {
    this.socket = null;
    this.greeted = false;
    clearTimeout(this.pumpTimer);
    this.pumpTimer = null;
    if (this.closedForGood) return;
    if (FATAL_CLOSE_CODES.has(code)) {
      this.fail(new DonjonError(CLIENT_CODES.CLOSED, `the server closed the socket (${code} ${reason}): not retrying`, {
        closeCode: code,
      }));
      return;
    }
    this.scheduleReconnect({ code, reason });
  }

  scheduleReconnect({ code, reason }) {
    if (!this.reconnectPolicy) {
      this.fail(new DonjonError(CLIENT_CODES.CLOSED, `the socket closed (${code} ${reason})`, { closeCode: code ?? undefined }));
      return;
    }
    const { initialDelay, maxDelay, factor, jitter } = this.reconnectPolicy;
    const base = Math.min(maxDelay, initialDelay * factor ** this.attempt) * (code === LATER_CLOSE_CODE ? 4 : 1);
    const delay = Math.min(maxDelay, base) * (1 + jitter * (Math.random() * 2 - 1));
    this.attempt += 1;
    this.setState("reconnecting", { code, reason });
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.setState("connecting", { code, reason });
      this.open();
    }, delay);
  }

  /** Stop for good because of `error`: reject what waits, and say so once. */
  fail(error) {
    if (this.closedForGood) return;
    this.shutdown(error);
    this.emit("error", error);
    this.setState("closed", { code: error.closeCode ?? null, reason: error.message });
  }

  /** Close the socket and stop reconnecting; pending commands reject with code "closed". */
  close() {
    if (this.closedForGood) return;
    this.shutdown(new DonjonError(CLIENT_CODES.CLOSED, "the connection was closed by the client"));
    this.setState("closed", { code: 1000, reason: "client closed" });
  }

  shutdown(error) {
    this.closedForGood = true;
    clearTimeout(this.retryTimer);
    clearTimeout(this.pumpTimer);
    const socket = this.socket;
    this.socket = null;
    if (socket) closeQuietly(socket, 1000, "closing");
    for (const [id, entry] of this.pending) {
      entry.reject(new DonjonError(error.code, error.message, { id, closeCode: error.closeCode }));
    }
    this.pending.clear();
    this.rejectReady(error);
  }

  // --- sending, paced ------------------------------------------------------------------------

  /** Queue an encoded frame; it leaves when the bucket has a token. */
  queue(data) {
    this.outbox.push(data);
    this.pump();
  }

  pump() {
    if (this.pumpTimer !== null) return;
    while (this.outbox.length && this.socket?.readyState === 1) {
      const wait = this.bucket.wait();
      if (wait > 0) {
        this.pumpTimer = setTimeout(() => {
          this.pumpTimer = null;
          this.pump();
        }, wait);
        return;
      }
      this.bucket.take();
      this.socket.send(this.outbox.shift());
    }
  }

  /**
   * Send a command; resolves with its ack, rejects with a DonjonError (its `code`, and `id`).
   * @param {{type: string, args?: object}} command
   * @param {{expectedVersion?: number, id?: string}} [options]
   */
  send(command, options) {
    let expectedVersion, id;
    try {
      ({ expectedVersion, id } = refuseUnknown("send", options, SEND_OPTIONS));
    } catch (error) {
      return Promise.reject(error);
    }
    if (this.closedForGood) {
      return Promise.reject(new DonjonError(CLIENT_CODES.CLOSED, "the connection is closed", { id }));
    }
    const commandId = id ?? `${this.idPrefix}-${this.nextId++}`;
    if (this.pending.has(commandId)) {
      return Promise.reject(new DonjonError("bad_frame", `command id ${commandId} is already waiting for its answer`, { id: commandId }));
    }
    // The command as given (a field the server does not know is refused by it, naming it), with
    // `args` filled in when left out, as the server would.
    const sent = command !== null && typeof command === "object" && command.args === undefined ? { ...command, args: {} } : command;
    const frame = { type: "command", id: commandId, command: sent };
    if (expectedVersion !== undefined && expectedVersion !== null) frame.expected_version = expectedVersion;
    const data = this.codec.encode(frame);
    const size = typeof data === "string" ? utf8Length(data) : data.byteLength;
    if (size > this.maxFrame) {
      // The server would answer frame_too_large without the id (it does not read the frame), or
      // close the socket (1009): refuse it here, where the answer can name the command.
      const message = `the command frame is ${size} bytes, above the limit of ${this.maxFrame}`;
      return Promise.reject(new DonjonError("frame_too_large", message, { id: commandId }));
    }
    return new Promise((resolve, reject) => {
      this.pending.set(commandId, { id: commandId, data, resolve, reject, resends: 0 });
      if (this.greeted) this.queue(data);
    });
  }

  /**
   * Leave the game (any time, the seat's turn or not): in a two-player game that is not
   * cooperative the other seat wins by forfeit; otherwise a bot plays the seat from then on.
   * Resolves with the ack, like send.
   * @param {{expectedVersion?: number, id?: string}} [options]
   */
  resign(options) {
    return this.send(RESIGN, options);
  }

  /**
   * Take back this seat's last command, when the game's undo policy allows it (`canUndo`); else
   * it rejects with `undo_refused`, whose message names the clause. Resolves with the ack, like send.
   * @param {{expectedVersion?: number, id?: string}} [options]
   */
  undo(options) {
    return this.send(UNDO, options);
  }

  resendLater(entry, delay) {
    entry.resends += 1;
    setTimeout(() => {
      if (this.greeted && this.pending.get(entry.id) === entry) this.queue(entry.data);
    }, delay);
  }

  // --- receiving -----------------------------------------------------------------------------

  onMessage(data) {
    let frame;
    try {
      frame = this.codec.decode(data);
    } catch (cause) {
      this.protocolBreach(`a frame did not decode as ${this.codecName}: ${cause}`);
      return;
    }
    if (!frame || typeof frame.type !== "string") {
      this.protocolBreach(`a frame without a type: ${JSON.stringify(frame)?.slice(0, 200)}`);
      return;
    }
    if (frame.type === "snapshot" || frame.type === "update") this.onView(frame);
    else if (frame.type === "ack") this.onAck(frame);
    else if (frame.type === "error") this.onError(frame);
    else if (frame.type === "spectators") this.onSpectators(frame);
    // unknown frame types are ignored: the protocol may add some
  }

  /** The node's spectator count for this game (a count, never who), pushed when it changes. */
  onSpectators(frame) {
    this.spectators = frame.count;
    this.emit("spectators", { count: frame.count });
  }

  onView(frame) {
    const firstOnSocket = !this.greeted;
    if (firstOnSocket) this.onGreeted();
    const known = this.version;
    if (known !== null && frame.version <= known) {
      // Already applied (a hello `since` that was current, or a snapshot after one). A later frame
      // on the same socket at or below the version would break the server's promise.
      if (!firstOnSocket) this.protocolBreach(`update at version ${frame.version} after version ${known}`);
      if (firstOnSocket && this.status === null) this.applyView(frame, false);
      return;
    }
    this.applyView(frame, true);
  }

  applyView(frame, isNew) {
    this.version = frame.version;
    this.status = frame.status;
    this.seats = frame.seats ?? this.seats;
    if (frame.type === "snapshot") this.seat = frame.seat ?? null;
    this.game = frame.game ?? this.game;
    this.view = frame.view;
    const rematch = this.rematch === null ? linkedRematch(frame) : null;
    if (rematch !== null) this.rematch = rematch;
    this.resolveReady(this);
    if (isNew) {
      this.emit("change", {
        version: this.version,
        status: this.status,
        seats: this.seats,
        seat: this.seat,
        view: this.view,
        events: frame.events ?? [],
        frame,
      });
    }
    // After "change", so that a listener finds the connection showing the finished game.
    if (rematch !== null) this.emit("rematch", { id: rematch, version: this.version });
  }

  /** The hello was answered: the socket is live; send every pending command again, in order. */
  onGreeted() {
    this.greeted = true;
    this.attempt = 0;
    this.setState("open");
    for (const entry of this.pending.values()) this.queue(entry.data);
  }

  onAck(frame) {
    const entry = this.pending.get(frame.id);
    if (!entry) return; // the answer to a resend whose first answer already came
    this.pending.delete(frame.id);
    entry.resolve({ id: frame.id, version: frame.version, duplicate: Boolean(frame.duplicate) });
  }

  onError(frame) {
    const error = new DonjonError(frame.code, frame.message ?? frame.code, frame.id === undefined ? {} : { id: frame.id });
    const entry = frame.id === undefined ? undefined : this.pending.get(frame.id);
    if (entry) {
      if (RESEND_CODES.has(frame.code) && entry.resends < this.maxResends) {
        this.resendLater(entry, this.backoff(entry.resends));
        return;
      }
      this.pending.delete(frame.id);
      entry.reject(error);
      return;
    }
    if (!this.greeted) {
      this.onHelloRefused(error);
      return;
    }
    this.emit("error", error);
  }

  /** Errors without a command id before the hello's answer answer the hello. */
  onHelloRefused(error) {
    if (RETRY_HELLO_CODES.has(error.code)) {
      setTimeout(() => this.socket && !this.greeted && this.onOpen(), this.backoff(this.attempt++));
      return;
    }
    if (error.code === "bad_frame" && this.version !== null) {
      // The only bad_frame this client's hello can get: `since` is ahead of the game (a store
      // that lost its last writes). Start again from a snapshot rather than never connecting.
      this.emit("error", error);
      this.version = null;
      this.onOpen();
      return;
    }
    this.fail(error);
  }

  backoff(attempt) {
    const policy = this.reconnectPolicy ?? DEFAULTS.reconnect;
    return Math.min(policy.maxDelay, policy.initialDelay * policy.factor ** attempt);
  }

  protocolBreach(message) {
    this.emit("error", new DonjonError(CLIENT_CODES.PROTOCOL, message));
  }
}

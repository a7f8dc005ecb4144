// DonjonClient: the lobby's HTTP routes, and the door to a game's websocket (GameConnection).

import { CLIENT_CODES, DonjonError, refuseUnknown } from "./errors.js";
import { GameConnection } from "./connection.js";

function query(params) {
  const pairs = Object.entries(params).filter(([, value]) => value !== undefined && value !== null);
  return pairs.length ? `?${new URLSearchParams(pairs.map(([key, value]) => [key, String(value)]))}` : "";
}

function bearer(token) {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** A request body as given, every field of it, known to this client or not (only `undefined`
 * ones left out, as JSON.stringify leaves them): the server is the judge of its bodies, and
 * refuses a field it does not know with `bad_request` naming it, where dropping it here would
 * quietly lose it. Anything but a plain object goes as it is, for the server to refuse. */
function bodyOf(request) {
  if (request === null || typeof request !== "object" || Array.isArray(request)) return request;
  return Object.fromEntries(Object.entries(request).filter(([, value]) => value !== undefined));
}

/** The refusal of a `client_seed` by a game created before seats could send one (docs/protocol.md). */
const LEGACY_SEATS = /created before seats could send a 'client_seed'/;

/**
 * A seat's contribution to a game's seed: 32 bytes from `crypto.getRandomValues` as 64 lowercase
 * hex digits (docs/protocol.md, Seeds), new for every call.
 */
export function newClientSeed() {
  const random = globalThis.crypto?.getRandomValues;
  if (!random) throw new DonjonError(CLIENT_CODES.NO_RANDOM, "this runtime has no crypto.getRandomValues to make a client_seed");
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(32));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** `{token, ...fields}`: the token goes in the Authorization header, every other field in the body. */
function withToken(what, request) {
  if (request === undefined || request === null) return { token: undefined, fields: {} };
  if (typeof request !== "object" || Array.isArray(request)) {
    throw new DonjonError("bad_request", `${what} takes an object, not ${JSON.stringify(request)}`);
  }
  const { token, ...fields } = request;
  return { token, fields: bodyOf(fields) };
}

const routeOf = (template, ...ids) => template.replace(/\{\}/g, () => encodeURIComponent(ids.shift()));

export class DonjonClient {
  /**
   * @param {string} [baseUrl] "http://127.0.0.1:8080"; "" (the default) is the page's own origin
   * @param {{fetch?: typeof fetch, WebSocket?: typeof WebSocket}} [options]
   */
  constructor(baseUrl = "", options = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.fetch = options.fetch ?? globalThis.fetch?.bind(globalThis);
    this.WebSocket = options.WebSocket ?? globalThis.WebSocket;
  }

  /** The websocket URL of a game: the base URL's scheme turned into ws/wss. */
  socketUrl(gameId) {
    const path = `/games/${encodeURIComponent(gameId)}/ws`;
    const origin = this.baseUrl || globalThis.location?.origin;
    if (!origin) throw new DonjonError(CLIENT_CODES.NETWORK, "no base URL, and no page origin to use instead");
    return `${origin.replace(/^http/, "ws")}${path}`;
  }

  /**
   * One HTTP request to the service: resolves with the answer's JSON (or text, with
   * `responseType: "text"`), rejects with a DonjonError carrying the documented error code.
   * Every method below is this with a route; use it for a route this client does not wrap yet.
   * @param {string} method
   * @param {string} route "/games/catalog"
   * @param {{body?: unknown, token?: string, responseType?: "json" | "text"}} [options]
   */
  async request(method, route, options = {}) {
    const { body, token, responseType = "json" } = refuseUnknown("request", options, ["body", "token", "responseType"]);
    const headers = { Accept: responseType === "text" ? "text/plain" : "application/json", ...bearer(token) };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await this.fetch(`${this.baseUrl}${route}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (cause) {
      throw new DonjonError(CLIENT_CODES.NETWORK, `${method} ${route} did not reach the service: ${cause}`, { cause });
    }
    const text = await response.text();
    if (response.ok && responseType === "text") return text;
    let data;
    try {
      data = text ? JSON.parse(text) : null;
    } catch {
      data = undefined;
    }
    if (response.ok && data !== undefined) return data;
    const error = data?.error;
    if (error && typeof error.code === "string") {
      throw new DonjonError(error.code, String(error.message ?? error.code), { status: response.status });
    }
    throw new DonjonError(CLIENT_CODES.HTTP, `${method} ${route} answered ${response.status}: ${text.slice(0, 200)}`, {
      status: response.status,
    });
  }

  // --- the service -------------------------------------------------------------------------------

  /** `GET /healthz`: `{status: "ok"}` whenever the process answers. */
  health() {
    return this.request("GET", "/healthz");
  }

  /** `GET /readyz`: `{status: "ready"}`, or `{status: "unavailable", error}` when the store does not answer (503). */
  async ready() {
    try {
      return await this.request("GET", "/readyz");
    } catch (error) {
      if (error instanceof DonjonError && error.status === 503 && error.code === "store_unavailable") {
        return { status: "unavailable", error: { code: error.code, message: error.message } };
      }
      throw error;
    }
  }

  /** `GET /metrics`: the Prometheus text. */
  metrics() {
    return this.request("GET", "/metrics", { responseType: "text" });
  }

  /** `GET /openapi.json`: the HTTP contract for machines. */
  openapi() {
    return this.request("GET", "/openapi.json");
  }

  /** `GET /asyncapi.json`: the websocket contract for machines. */
  asyncapi() {
    return this.request("GET", "/asyncapi.json");
  }

  /** `GET /keys`: the public keys this node signs game exports with (for `verifyExport`'s `key`). */
  keys() {
    return this.request("GET", "/keys");
  }

  /** `GET /ledger`: a page of the public ledger (`{from, limit}`), or one game's entry (`{game}`). */
  async ledger(options) {
    const { from, limit, game } = refuseUnknown("ledger", options, ["from", "limit", "game"]);
    return this.request("GET", `/ledger${query({ from, limit, game })}`);
  }

  // --- the lobby ---------------------------------------------------------------------------------

  catalog() {
    return this.request("GET", "/games/catalog");
  }

  /** `GET /games/catalog/{game}/assets`: what a client needs to draw a game (tile designs, ports...). */
  gameAssets(game) {
    return this.request("GET", routeOf("/games/catalog/{}/assets", game));
  }

  /**
   * `POST /games` with every field given, under its wire name (`game`, `seats`, `options`, `bots`,
   * `bots_only`, `clock`, `on_timeout`, `undo`, `spectator_delay`): a field the server does not
   * know is sent too, and refused by it (`bad_request` naming it), never dropped here.
   */
  createGame(request = {}) {
    return this.request("POST", "/games", { body: bodyOf(request) });
  }

  /**
   * Take a seat. `client_seed` is the seat's contribution to the game's seed (docs/fairness.md):
   * left out (undefined), one is made here from `crypto.getRandomValues` (newClientSeed), so that the
   * server never deals alone; a string is sent as it is; `null` sends none (the service makes one,
   * fixed by its committed seed). `token`: in a rematch, the seat's token of the game it follows
   * (the rematch's seats are reserved). The reply's `seed_contribution_from` is `"seat"` when the
   * value sent was taken. Every other field goes to the server as given.
   */
  async takeSeat(gameId, request = {}) {
    const { token, fields } = withToken("takeSeat", request);
    const path = routeOf("/games/{}/seats", gameId);
    const { client_seed: given, ...rest } = fields;
    const made = given === undefined;
    const body = made ? { ...rest, client_seed: newClientSeed() } : given === null ? rest : fields;
    try {
      return await this.request("POST", path, { body, token });
    } catch (error) {
      // A game created before v1.2 takes no client_seed: a seed made here is then left out.
      if (!(made && error instanceof DonjonError && error.code === "bad_request" && LEGACY_SEATS.test(error.message))) throw error;
      return this.request("POST", path, { body: rest, token });
    }
  }

  /**
   * The rematch of a finished game, asked for by one of its seats (its `token`): created by the
   * first seat asking, the same for every seat after. Resolves with `{id, seat}`, the caller's
   * seat there; each seat then takes it with `takeSeat(id, {token})`, its old token.
   */
  async rematch(gameId, request = {}) {
    const { token, fields } = withToken("rematch", request);
    const body = Object.keys(fields).length ? fields : undefined; // the route takes no field: the server says so
    return this.request("POST", routeOf("/games/{}/rematch", gameId), { body, token });
  }

  async listGames(options) {
    const { status, limit, offset } = refuseUnknown("listGames", options, ["status", "limit", "offset"]);
    return this.request("GET", `/games${query({ status, limit, offset })}`);
  }

  async getGame(gameId, options) {
    const { token } = refuseUnknown("getGame", options, ["token"]);
    return this.request("GET", routeOf("/games/{}", gameId), { token });
  }

  async events(gameId, options) {
    const { from, limit, token } = refuseUnknown("events", options, ["from", "limit", "token"]);
    return this.request("GET", `${routeOf("/games/{}/events", gameId)}${query({ from, limit })}`, { token });
  }

  /** Every event the caller may see, page after page, from `from` (default 1). */
  async *allEvents(gameId, options) {
    const { from, limit, token } = refuseUnknown("allEvents", options, ["from", "limit", "token"]);
    let next = from ?? 1;
    while (next !== null && next !== undefined) {
      const page = await this.events(gameId, { from: next, limit, token });
      yield* page.events;
      next = page.next;
    }
  }

  async state(gameId, options) {
    const { at } = refuseUnknown("state", options, ["at"]);
    return this.request("GET", `${routeOf("/games/{}/state", gameId)}${query({ at })}`);
  }

  /** `GET /games/{id}/export`: a finished game's signed export (check it with `verifyExport`). */
  exportGame(gameId) {
    return this.request("GET", routeOf("/games/{}/export", gameId));
  }

  /** Open (and keep open) the game's websocket; see GameConnection. */
  connect(gameId, options = {}) {
    return new GameConnection(this, gameId, options);
  }
}

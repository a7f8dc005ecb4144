// DonjonClient: the lobby's HTTP routes, and the door to a game's websocket (GameConnection).

import { CLIENT_CODES, DonjonError } from "./errors.js";
import { GameConnection } from "./connection.js";

function query(params) {
  const pairs = Object.entries(params).filter(([, value]) => value !== undefined && value !== null);
  return pairs.length ? `?${new URLSearchParams(pairs.map(([key, value]) => [key, String(value)]))}` : "";
}

function bearer(token) {
  return token ? { Authorization: `Bearer ${token}` } : {};
}

/** Only the fields given: the server refuses unknown fields, and defaults what is left out. */
function definedFields(fields) {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
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

  async request(method, path, { body, token } = {}) {
    const headers = { Accept: "application/json", ...bearer(token) };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    let response;
    try {
      response = await this.fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (cause) {
      throw new DonjonError(CLIENT_CODES.NETWORK, `${method} ${path} did not reach the service: ${cause}`, { cause });
    }
    const text = await response.text();
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
    throw new DonjonError(CLIENT_CODES.HTTP, `${method} ${path} answered ${response.status}: ${text.slice(0, 200)}`, {
      status: response.status,
    });
  }

  catalog() {
    return this.request("GET", "/games/catalog");
  }

  /** The game's options and bots, and the service's features (`clock`, `on_timeout`, `undo`, `spectator_delay`). */
  createGame({ game, seats, options, bots, bots_only, clock, on_timeout, undo, spectator_delay } = {}) {
    const body = definedFields({ game, seats, options, bots, bots_only, clock, on_timeout, undo, spectator_delay });
    return this.request("POST", "/games", { body });
  }

  /**
   * Take a seat. `client_seed` is the seat's contribution to the game's seed (docs/fairness.md):
   * left out (undefined), one is made here from `crypto.getRandomValues` (newClientSeed), so that the
   * server never deals alone; a string is sent as it is; `null` sends none (the service makes one,
   * fixed by its committed seed). `token`: in a rematch, the seat's token of the game it follows
   * (the rematch's seats are reserved). The reply's `seed_contribution_from` is `"seat"` when the
   * value sent was taken.
   */
  async takeSeat(gameId, { name, request_id, client_seed, token } = {}) {
    const path = `/games/${encodeURIComponent(gameId)}/seats`;
    const made = client_seed === undefined;
    const seed = made ? newClientSeed() : client_seed ?? undefined;
    try {
      return await this.request("POST", path, { body: definedFields({ name, request_id, client_seed: seed }), token });
    } catch (error) {
      // A game created before v1.2 takes no client_seed: a seed made here is then left out.
      if (!(made && error instanceof DonjonError && error.code === "bad_request" && LEGACY_SEATS.test(error.message))) throw error;
      return this.request("POST", path, { body: definedFields({ name, request_id }), token });
    }
  }

  /**
   * The rematch of a finished game, asked for by one of its seats (its `token`): created by the
   * first seat asking, the same for every seat after. Resolves with `{id, seat}`, the caller's
   * seat there; each seat then takes it with `takeSeat(id, {token})`, its old token.
   */
  rematch(gameId, { token } = {}) {
    return this.request("POST", `/games/${encodeURIComponent(gameId)}/rematch`, { token });
  }

  listGames({ status, limit, offset } = {}) {
    return this.request("GET", `/games${query({ status, limit, offset })}`);
  }

  getGame(gameId, { token } = {}) {
    return this.request("GET", `/games/${encodeURIComponent(gameId)}`, { token });
  }

  events(gameId, { from, limit, token } = {}) {
    return this.request("GET", `/games/${encodeURIComponent(gameId)}/events${query({ from, limit })}`, { token });
  }

  /** Every event the caller may see, page after page, from `from` (default 1). */
  async *allEvents(gameId, { from, limit, token } = {}) {
    let next = from ?? 1;
    while (next !== null && next !== undefined) {
      const page = await this.events(gameId, { from: next, limit, token });
      yield* page.events;
      next = page.next;
    }
  }

  state(gameId, { at } = {}) {
    return this.request("GET", `/games/${encodeURIComponent(gameId)}/state${query({ at })}`);
  }

  /** Open (and keep open) the game's websocket; see GameConnection. */
  connect(gameId, options = {}) {
    return new GameConnection(this, gameId, options);
  }
}

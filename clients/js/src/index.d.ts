// Types of @donjon/client: every HTTP body and websocket frame of docs/protocol.md (protocol v1.4),
// and the client's own API. Objects may gain fields in later protocol versions (ignore unknown ones).

// --- shared shapes --------------------------------------------------------------------------------

export type GameStatus = "open" | "active" | "finished";

/** A command object exactly as `legal` lists it and `command` frames carry it. */
export interface Command {
  type: string;
  args?: Record<string, unknown>;
}

/** since v1.2: the service's own commands, beside the engine's; `undo` ends `legal` when allowed, `resign` is never listed */
export type ServiceCommand = { type: "resign"; args: {} } | { type: "undo"; args: {} };

/** since v1.2: the turn clocks (docs/protocol.md, Turn clocks) */
export interface Clock {
  /** per seat, as of `since` */
  remaining_ms: number[];
  /** the running seat whose time runs out first (at `deadline`); null: paused */
  running: number | null;
  /** every seat whose clock runs since `since` (each seat that owes a command), in seat order; []: paused */
  running_seats: number[];
  since: number;
  deadline: number | null;
}

/** A viewer's view of a game: per game under docs/games/; always with `legal`. */
export interface View {
  /** ends with {type: "undo"} when this seat may undo (since v1.2) */
  legal: Command[];
  /** since v1.2, games with a clock */
  clock?: Clock;
  /** since v1.2: seats that resigned or timed out */
  left?: number[];
  /** since v1.2: the rematch game's id, once created */
  rematch?: string;
  [field: string]: unknown;
}

export interface SeatEntry {
  seat: number;
  /** null while the seat is free */
  name: string | null;
  /** since v1.1: the bot filling this seat */
  bot?: string;
  /** since v1.2: the seat's contribution to the game's seed, once taken */
  seed_contribution?: string;
  /** since v1.2, `GET /games/{id}` only: a human seat of an active game with no socket open for longer than `DONJON_AWAY_MS` */
  away?: true;
}

/** An event as a viewer sees it (redacted for that viewer). */
export interface GameEvent {
  version: number;
  /** engine events never contain a dot; service events (`game.*`) do */
  type: string;
  payload: Record<string, unknown>;
  /** the seat that produced it; null: the service */
  actor: number | null;
  /** milliseconds since the epoch */
  ts: number;
}

/** Every stable error code of docs/protocol.md, rules' own codes, and the client's CLIENT_CODES. */
export type ErrorCode =
  | "bad_json" | "bad_frame" | "unknown_frame" | "hello_required" | "bad_request" | "unknown_command"
  | "bad_command" | "not_your_turn" | "illegal_move" | "game_over" | "not_started" | "bad_options"
  | "unknown_game" | "game_full" | "unauthorized" | "spectator" | "conflict" | "frame_too_large"
  | "rate_limited" | "store_unavailable" | "draining" | "not_found" | "internal" | "rule_violation"
  | "origin_not_allowed" | "not_finished" | "game_pruned" | "undo_refused" | "not_over" | "clock_expired"
  | ClientErrorCode
  | (string & {});

export type ClientErrorCode = "network" | "http_error" | "closed" | "protocol_error" | "no_random";

/** The body of every HTTP error response. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

// --- HTTP bodies ----------------------------------------------------------------------------------

/** A game option's value: a boolean, an integer, a `choice`'s string or integer, a `list`'s strings or null */
export type OptionValue = boolean | number | string | string[] | null;

export interface OptionSpec {
  type: "bool" | "int" | "choice" | "list";
  default: OptionValue;
  description: string;
  /** the option's name for people (a form's label) */
  label?: string;
  choices?: OptionValue[];
  /** the bounds of an `int` option */
  minimum?: number;
  maximum?: number;
  /** what a `list` option holds, for people (`tile ids`) */
  items?: string;
  [field: string]: unknown;
}

/** since v1.2: one service feature of `POST /games`, as the catalog lists it */
export interface FeatureSpec {
  default: null | boolean | string;
  description: string;
  choices?: string[];
  [field: string]: unknown;
}

export interface CatalogEntry {
  id: string;
  title: string;
  min_seats: number;
  max_seats: number;
  options: Record<string, OptionSpec>;
  /** options accepted but never shown before the end (a scripted `tile_order`) */
  secret_options?: string[];
  /** since v1.1 */
  bots: string[];
  /** since v1.2: `clock`, `on_timeout`, `undo`, `spectator_delay`, with this game's defaults */
  features?: Record<string, FeatureSpec>;
  [field: string]: unknown;
}

export interface CatalogBody {
  games: CatalogEntry[];
}

export interface CreateGameRequest {
  game: string;
  seats?: number;
  options?: Record<string, OptionValue>;
  /** since v1.1: seat (decimal string) -> bot name */
  bots?: Record<string, string>;
  /** since v1.1 */
  bots_only?: boolean;
  /** since v1.2: turn clocks, in seconds (fractions allowed: kept to the millisecond) */
  clock?: { initial_s: number; increment_s?: number } | { per_move_s: number } | null;
  /** since v1.2 (null: the game's default) */
  on_timeout?: "bot" | "forfeit" | null;
  /** since v1.2: false turns undo off */
  undo?: boolean;
  /** since v1.2: a number of versions (an integer), or of seconds (fractions allowed) */
  spectator_delay?: { versions: number } | { seconds: number } | null;
}

export interface CreateGameBody {
  id: string;
  [field: string]: unknown;
}

export interface TakeSeatRequest {
  /** 1-40 characters; optional only in a rematch (since v1.2), taken with the old token: the old name by default */
  name?: string;
  /** since v1.2: the request's idempotency key, 16-128 of A-Z a-z 0-9 _ - (as secret as the token it yields) */
  request_id?: string;
  /**
   * this seat's contribution to the game's seed: 1-128 printable ASCII characters, no spaces
   * (docs/fairness.md). Left out: the client makes one (newClientSeed); null: none is sent.
   */
  client_seed?: string | null;
  /** since v1.2, a rematch only: the seat's token of the game it follows (sent as `Authorization`, not in the body) */
  token?: string;
}

export interface TakeSeatBody {
  seat: number;
  /** the seat's only credential, given once */
  token: string;
  version: number;
  status: "open" | "active";
  /** the value this seat contributed to the game's seed (its client_seed, or one the service made) */
  seed_contribution?: string;
  /** "seat": the client_seed sent is the contribution; "server": none was sent */
  seed_contribution_from?: "seat" | "server";
  [field: string]: unknown;
}

/** since v1.2: `POST /games/{id}/rematch` (201) */
export interface RematchBody {
  /** the rematch game's id: the same for every seat asking */
  id: string;
  /** the caller's seat in the rematch (the seats rotate: old seat s sits at (s - 1) mod n) */
  seat: number;
}

export interface LobbyEntry {
  id: string;
  game: string;
  status: GameStatus;
  version: number;
  seats: number;
  taken: number;
  names: (string | null)[];
  created: number;
  /** finished games: the engine's summary */
  summary?: Record<string, unknown>;
  /** since v1.1, games with bot seats: per seat the bot's name or null */
  bots?: (string | null)[];
  [field: string]: unknown;
}

export interface ListGamesQuery {
  status?: GameStatus;
  limit?: number;
  offset?: number;
}

export interface ListGamesBody {
  status: GameStatus;
  offset: number;
  limit: number;
  games: LobbyEntry[];
}

export interface GameBody {
  id: string;
  game: string;
  status: GameStatus;
  version: number;
  /** null: the spectator view */
  seat: number | null;
  seats: SeatEntry[];
  view: View;
  /** since v1.3: spectator sockets watching on the node that answered (each node counts its own) */
  spectators?: number;
}

export interface EventsQuery {
  from?: number;
  limit?: number;
  token?: string;
}

export interface EventsBody {
  id: string;
  version: number;
  from: number;
  events: GameEvent[];
  /** the `from` of the next page; null when this page reached the end */
  next: number | null;
}

export interface StateBody {
  id: string;
  game: string;
  status: GameStatus;
  version: number;
  seats: SeatEntry[];
  view: View;
}

export interface HealthBody {
  status: "ok";
}

/** `GET /readyz`: ready (200), or the store does not answer or the node drains (503) */
export type ReadyBody =
  | { status: "ready"; error?: undefined }
  | { status: "unavailable" | "draining"; error: { code: "store_unavailable" | "draining"; message: string } };

/** One tile as printed (rotation 0): the segment at each of its 12 ports (`null`: none), and its segments. */
export interface TileDesign {
  id: string;
  ports: (number | null)[];
  segments: { kind: string; token: string; attrs: Record<string, unknown>; touches: number[]; [field: string]: unknown }[];
  [field: string]: unknown;
}

/** `GET /games/catalog/{game}/assets`: what a client needs to draw a game (docs/protocol.md; per game) */
export interface GameAssets {
  game: string;
  /** tile games: the port names, in port order */
  ports?: string[];
  /** tile games: tile id -> design */
  tiles?: Record<string, TileDesign>;
  [field: string]: unknown;
}

/** since v1.2: one signing key of the deployment, as `GET /keys` lists it (docs/fairness.md, Keys) */
export interface NodeKey {
  /** the first 16 hex digits of sha256(raw public key) */
  id: string;
  algorithm: "ed25519";
  /** the raw 32-byte key, hex: what `verifyExport`'s `key` and `donjon verify --key` take */
  public_key: string;
  /** exactly one key is current: it signs new exports */
  status: "current" | "retired";
  /** ms since the epoch when it became current; null for a key imported or kept from before the keyring */
  signed_from: number | null;
  /** ms since the epoch when it was retired; null while current */
  signed_until: number | null;
  [field: string]: unknown;
}

/** since v1.2: `GET /keys`, the current key first */
export interface KeysBody {
  keys: NodeKey[];
  /** ms since the epoch: only games created before it may be recorded under legacy schemes */
  legacy_games_before: number | null;
  [field: string]: unknown;
}

/** `GET /games/{id}/export`: a finished game's whole log, signed by the node (docs/fairness.md) */
export interface ExportBody {
  /** "donjon.export/2" (verifiers still accept "donjon.export/1" files, which have no exported_at) */
  format: string;
  /** donjon.export/2: when it was signed, ms since the epoch */
  exported_at: number;
  id: string;
  game: string;
  status: "finished";
  chain: { algorithm: string; genesis: string; version: number; head: string; [field: string]: unknown };
  /** hex: the revealed seed */
  seed: string;
  /** games with secret options only: their values, revealed */
  secret_options?: Record<string, unknown>;
  /** every stored body (base64 msgpack) with its hashes */
  events: { version: number; body: string; prev_hash: string; hash: string }[];
  /** since v1.2 */
  signature: { algorithm: "ed25519"; key_id: string; public_key: string; value: string };
  /** the game's place in the public ledger (games created since there is one) */
  ledger?: LedgerPlace;
  /** the rematch's game id, once one follows the game */
  rematch?: string;
  [field: string]: unknown;
}

/** An Ed25519 signature over the canonical JSON of the other fields of the object carrying it */
export interface Signature {
  algorithm: "ed25519";
  key_id: string;
  public_key: string;
  value: string;
  [field: string]: unknown;
}

/** One game of the public ledger (docs/fairness.md, The public ledger) */
export interface LedgerEntry {
  /** 1 for the first game created, then one more per game */
  position: number;
  id: string;
  game: string;
  /** the public options only */
  options: Record<string, unknown>;
  seed_commitment: string;
  /** ms since the epoch */
  created: number;
  /** the previous entry's hash; 64 zeros before the first */
  prev_hash: string;
  /** hex sha256 of prev_hash (ASCII) then the canonical JSON of the other fields */
  hash: string;
  [field: string]: unknown;
}

/** The ledger's last entry, signed */
export interface LedgerHead {
  /** 0 while the ledger is empty */
  position: number;
  hash: string;
  /** ms since the epoch */
  signed_at: number;
  signature: Signature;
  [field: string]: unknown;
}

/** Where a game is in the public ledger */
export interface LedgerPlace {
  position: number;
  hash: string;
  [field: string]: unknown;
}

/** `GET /ledger`: a page of the public ledger; with `?game=`, that game's `entry` first */
export interface LedgerBody {
  entry?: LedgerEntry;
  entries: LedgerEntry[];
  head: LedgerHead;
  /** the `from` of the next page; null at the head */
  next: number | null;
  [field: string]: unknown;
}

/** Options of `DonjonClient.request`, the one HTTP call every method makes. */
export interface RequestOptions {
  /** sent as JSON */
  body?: unknown;
  /** a seat token, sent as `Authorization: Bearer <token>` */
  token?: string;
  /** "text": resolve with the answer's text (`/metrics`); default "json" */
  responseType?: "json" | "text";
}

// --- websocket frames -----------------------------------------------------------------------------

export interface HelloFrame {
  type: "hello";
  token?: string;
  since?: number;
}

export interface CommandFrame {
  type: "command";
  /** 1-128 characters; the idempotency key, scoped to the seat */
  id: string;
  command: Command;
  expected_version?: number;
}

export type ClientFrame = HelloFrame | CommandFrame;

export interface SnapshotFrame {
  type: "snapshot";
  game: string;
  version: number;
  status: GameStatus;
  seat: number | null;
  seats: SeatEntry[];
  view: View;
}

export interface UpdateFrame {
  type: "update";
  game: string;
  version: number;
  status: GameStatus;
  seats: SeatEntry[];
  events: GameEvent[];
  view: View;
}

export interface AckFrame {
  type: "ack";
  id: string;
  version: number;
  duplicate: boolean;
}

export interface ErrorFrame {
  type: "error";
  id?: string;
  code: ErrorCode;
  message: string;
}

/** since v1.3: the game's spectator count on this node, pushed when it changes; a count, never who */
export interface SpectatorsFrame {
  type: "spectators";
  game: string;
  count: number;
}

export type ServerFrame = SnapshotFrame | UpdateFrame | AckFrame | ErrorFrame | SpectatorsFrame;

/** Close codes the server uses (docs/protocol.md, "Close codes"); 1006: dropped without a close frame. */
export type CloseCode = 1000 | 1001 | 1006 | 1008 | 1009 | 1011 | 1013 | (number & {});

// --- the client -----------------------------------------------------------------------------------

export declare const CLIENT_CODES: Readonly<{
  NETWORK: "network";
  HTTP: "http_error";
  CLOSED: "closed";
  PROTOCOL: "protocol_error";
  NO_RANDOM: "no_random";
}>;

/** A seat's contribution to a game's seed: 32 bytes of crypto.getRandomValues as 64 hex digits. */
export declare function newClientSeed(): string;

export declare class DonjonError extends Error {
  constructor(code: ErrorCode, message: string, extra?: { status?: number; id?: string; closeCode?: number; cause?: unknown });
  readonly name: "DonjonError";
  /** stable: switch on it */
  code: ErrorCode;
  /** HTTP status, for errors from a route */
  status?: number;
  /** the command id, for errors answering a command */
  id?: string;
  /** the socket's close code, for errors of code "closed" */
  closeCode?: number;
}

export interface WebSocketLike {
  readonly readyState: number;
  binaryType: string;
  send(data: string | Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: any) => void): void;
}

export type WebSocketConstructor = new (url: string, protocols?: string | string[]) => WebSocketLike;

export interface ClientOptions {
  fetch?: typeof fetch;
  /** default: globalThis.WebSocket (Node 20: run with --experimental-websocket, or pass the `ws` package's) */
  WebSocket?: WebSocketConstructor;
}

export interface ReconnectPolicy {
  /** ms before the first retry (200) */
  initialDelay?: number;
  /** ms between retries at most (5000) */
  maxDelay?: number;
  /** growth per attempt (2) */
  factor?: number;
  /** +- this fraction at random (0.25) */
  jitter?: number;
}

export interface ConnectOptions {
  /** a seat token; absent: spectator */
  token?: string;
  /** the last version already seen: the first frame is then an update with what came after */
  since?: number;
  codec?: "json" | "msgpack";
  /** frames per second this client sends at most (16; the server allows 20 by default) */
  rate?: number;
  /** frames sent back to back at most (20; the server allows 40 by default) */
  burst?: number;
  /** false: do not reconnect */
  reconnect?: false | ReconnectPolicy;
  /** times a command is sent again after rate_limited, store_unavailable or internal (8) */
  maxResends?: number;
  /** bytes a command frame may have; larger ones reject with frame_too_large unsent (65536, the server's default) */
  maxFrame?: number;
}

/**
 * Every HTTP route of `service/contract/openapi.json` but the web app's pages, one method each,
 * and `connect` for the websocket. Request bodies are sent with every field given, under the
 * wire's names: a field the server does not know is refused by it (`bad_request` naming it),
 * never dropped. Options the server never sees (a token, query parameters, `connect`'s) that
 * the client does not know are refused by the client, with `bad_request` naming them.
 */
export declare class DonjonClient {
  constructor(baseUrl?: string, options?: ClientOptions);
  readonly baseUrl: string;
  socketUrl(gameId: string): string;
  /** the one HTTP call every method makes: the answer's JSON (or text), or a DonjonError */
  request<T = unknown>(method: string, route: string, options?: RequestOptions): Promise<T>;
  /** `GET /healthz` */
  health(): Promise<HealthBody>;
  /** `GET /readyz`: resolves with `{status: "unavailable", error}` too (503) */
  ready(): Promise<ReadyBody>;
  /** `GET /metrics`: Prometheus text */
  metrics(): Promise<string>;
  /** `GET /openapi.json` */
  openapi(): Promise<Record<string, unknown>>;
  /** `GET /asyncapi.json` */
  asyncapi(): Promise<Record<string, unknown>>;
  /** since v1.2: `GET /keys` */
  keys(): Promise<KeysBody>;
  /** `GET /ledger`: a page of the public ledger, or (`game`) that game's entry and the entries after it */
  ledger(query?: { from?: number; limit?: number; game?: string }): Promise<LedgerBody>;
  /** `GET /games/catalog` */
  catalog(): Promise<CatalogBody>;
  /** `GET /games/catalog/{game}/assets` */
  gameAssets(game: string): Promise<GameAssets>;
  /** `POST /games` */
  createGame(body: CreateGameRequest): Promise<CreateGameBody>;
  /** `POST /games/{id}/seats` */
  takeSeat(gameId: string, body: TakeSeatRequest): Promise<TakeSeatBody>;
  /** since v1.2, `POST /games/{id}/rematch`: the rematch of a finished game, by one of its seats; rejects with not_over, unauthorized, ... */
  rematch(gameId: string, options: { token: string }): Promise<RematchBody>;
  /** `GET /games` */
  listGames(query?: ListGamesQuery): Promise<ListGamesBody>;
  /** `GET /games/{id}` */
  getGame(gameId: string, options?: { token?: string }): Promise<GameBody>;
  /** `GET /games/{id}/events`: one page */
  events(gameId: string, query?: EventsQuery): Promise<EventsBody>;
  /** every page of `GET /games/{id}/events` */
  allEvents(gameId: string, query?: EventsQuery): AsyncGenerator<GameEvent, void, undefined>;
  /** `GET /games/{id}/state` */
  state(gameId: string, query?: { at?: number }): Promise<StateBody>;
  /** `GET /games/{id}/export`: a finished game's signed export (check it with `verifyExport`) */
  exportGame(gameId: string): Promise<ExportBody>;
  /** `GET /games/{id}/ws`, kept open */
  connect(gameId: string, options?: ConnectOptions): GameConnection;
}

export type ConnectionState = "connecting" | "open" | "reconnecting" | "closed";

export interface ChangeDetail {
  version: number;
  status: GameStatus;
  seats: SeatEntry[];
  seat: number | null;
  view: View;
  /** the events since the previous change this viewer may see ([] in a snapshot) */
  events: GameEvent[];
  frame: SnapshotFrame | UpdateFrame;
}

export interface ConnectionDetail {
  state: ConnectionState;
  attempt: number;
  /** the close code that caused a reconnect, if any */
  code: CloseCode | null;
  reason: string;
}

/** since v1.2: the game this connection shows links a rematch (fired once per connection, when first seen) */
export interface RematchDetail {
  /** the rematch game's id (also `conn.rematch`) */
  id: string;
  /** the version of the view that showed it */
  version: number;
}

/** since v1.3: the `spectators` frame: how many spectator sockets watch on the node of this socket */
export interface SpectatorsDetail {
  count: number;
}

export interface ConnectionEvents {
  change: ChangeDetail;
  connection: ConnectionDetail;
  rematch: RematchDetail;
  spectators: SpectatorsDetail;
  error: DonjonError;
}

export interface Ack {
  id: string;
  version: number;
  duplicate: boolean;
}

export interface SendOptions {
  /** apply only at this version, else `conflict` */
  expectedVersion?: number;
  /** the command id (default: generated, unique); resends use it */
  id?: string;
}

export declare class GameConnection extends EventTarget {
  readonly gameId: string;
  /** resolves after the first snapshot (or update, with `since`); rejects if the connection fails for good first */
  readonly ready: Promise<GameConnection>;
  /** the version of the last frame applied; null before the first */
  readonly version: number | null;
  readonly status: GameStatus | null;
  readonly seats: SeatEntry[];
  /** this connection's seat (from the snapshot; a connection opened with `since` gets none, so null); null: spectator */
  readonly seat: number | null;
  readonly view: View | null;
  readonly game: string | null;
  /** view.legal, or [] */
  readonly legal: Command[];
  /** since v1.2: `legal` offers `{type: "undo"}` (this seat may undo now) */
  readonly canUndo: boolean;
  /** since v1.2: the rematch game's id once the game links one (view.rematch, `game.rematch`); null before */
  readonly rematch: string | null;
  /** since v1.3: the last spectator count pushed (the `spectators` frame); null before one */
  readonly spectators: number | null;
  readonly state: ConnectionState;
  on<K extends keyof ConnectionEvents>(type: K, fn: (detail: ConnectionEvents[K]) => void): () => void;
  send(command: Command, options?: SendOptions): Promise<Ack>;
  /** since v1.2: leave the game (`{type: "resign"}`), the seat's turn or not; resolves with the ack */
  resign(options?: SendOptions): Promise<Ack>;
  /** since v1.2: take back this seat's last command (`{type: "undo"}`); refused with undo_refused unless `canUndo` */
  undo(options?: SendOptions): Promise<Ack>;
  close(): void;
}

export declare const MSGPACK_SUBPROTOCOL: "donjon.msgpack";

export declare class TokenBucket {
  constructor(rate: number, burst: number, now?: () => number);
  take(): boolean;
  wait(): number;
}

export declare namespace msgpack {
  function encode(value: unknown): Uint8Array;
  function decode(data: Uint8Array | ArrayBuffer): unknown;
}

/**
 * Play a seat from `legal` alone until the game is finished (resolves with the connection);
 * rejects with the first error other than a lost race (`conflict`). Default choice: at random.
 */
export declare function playFromLegal(
  conn: GameConnection,
  options?: { choose?: (legal: Command[], conn: GameConnection) => Command },
): Promise<GameConnection>;

/** One check of {@link verifyExport}: `name` is "format", "hash chain", "seed commitment", "sealed parts", "draw scheme", "seat contributions", "draws" (donjon-draw-2: every deal and roll), "tile draws" (donjon-draw-1 Carcassonne) or "signature". */
export interface ExportCheck {
  name: string;
  ok: boolean;
  detail: string;
}

/** One key the caller trusts, as `GET /keys` lists it (since v1.3 with `status` and the time it
 * signed; a body of before lists only `id`, `algorithm`, `public_key`: such a key counts as current). */
export interface TrustedKey {
  id?: string;
  algorithm?: "ed25519" | string;
  /** the raw 32-byte Ed25519 key, hex */
  public_key: string;
  status?: "current" | "retired";
  /** ms since the epoch, or null when not known */
  signed_from?: number | null;
  /** ms since the epoch: a retired key signed nothing after this; null for the current key */
  signed_until?: number | null;
}

/** What {@link verifyExport} pins the signer to: the body of the deployment's `GET /keys`, a list of
 * public keys (hex, or key objects), or one public key. */
export type TrustedKeys =
  | { keys: readonly (TrustedKey | string)[]; legacy_games_before?: number | null }
  | readonly (TrustedKey | string)[]
  | string;

/** What {@link verifyExport} found: `checks` is what it checked, `beyond` what only `donjon verify` checks. */
export interface ExportVerdict {
  ok: boolean;
  /** a game recorded before donjon-draw-1: its draws are not re-derived here ("legacy: weaker guarantees") */
  legacy: boolean;
  verdict: "verifies" | "verifies, signer unpinned" | "legacy: weaker guarantees" | "does not verify";
  /** "pinned": a key the trusted keys list signed it; "unpinned": no trusted keys were given (nothing
   * says who signed); "refused": the signature or its signer is not trusted; "unchecked": not reached */
  signer: "pinned" | "unpinned" | "refused" | "unchecked";
  /** the signature's key_id, as the file states it */
  keyId: string | null;
  hashes: "webcrypto" | "fallback";
  checks: ExportCheck[];
  beyond: string[];
  events: number;
  bodies: object[];
}

/**
 * Check a game export (GET /games/{id}/export, `donjon export`; docs/fairness.md) offline: the format
 * (`donjon.export/1` or `/2`), the hash chain, the schemes game.created claims (no downgrade: a game
 * created since SHA-256 chains and donjon-draw-1 came in may not claim less), the seed commitment, the
 * events' sealed parts (opened with the revealed seed; `bodies` are the opened ones), every seat's seed
 * contribution, every draw it can re-derive (donjon-draw-2: every deal and roll of every game;
 * donjon-draw-1: Carcassonne's tiles), and the Ed25519 signature: its key_id must be sha256(public
 * key)[:16] and its key one `trustedKeys` lists, not retired before the file was signed (`key`: one
 * public key, the same as `trustedKeys: [key]`). Without either, `signer` is "unpinned". Never throws.
 */
export declare function verifyExport(
  exported: unknown,
  options?: { trustedKeys?: TrustedKeys; key?: string; subtle?: SubtleCrypto | null },
): Promise<ExportVerdict>;

/** {@link verifyExport} on a file's text: not JSON, or a key twice in one object, is a "format" mismatch. */
export declare function verifyExportText(
  text: string,
  options?: { trustedKeys?: TrustedKeys; key?: string; subtle?: SubtleCrypto | null },
): Promise<ExportVerdict>;

/** The key id of a public key (64 hex digits): the first 16 hex digits of sha256 of its raw bytes. */
export declare function keyIdOf(publicKeyHex: string): string;

/** The export formats the verifier reads. */
export declare const EXPORT_FORMATS: readonly ["donjon.export/1", "donjon.export/2"];

/** When SHA-256 chains and donjon-draw-1 came in (ms since the epoch): a game created since may not claim less. */
export declare const STRONG_SCHEMES_SINCE: number;

/** One stream of docs/fairness.md: `new Draw(gameSeed, label, number)` (donjon-draw-1 and donjon-draw-2 alike). */
export declare class Draw {
  constructor(key: Uint8Array, label: string, version: number);
  below(n: number | bigint): number | bigint;
  randrange(start: number, stop?: number): number;
  randint(low: number, high: number): number;
  choice<T>(items: readonly T[]): T;
  shuffle(items: unknown[]): void;
  sample<T>(items: readonly T[], k: number): T[];
  secretSalt(): string;
}

// Type-checked by `npm test` (tsc --noEmit), never run: the API as a TypeScript client uses it.
import { DonjonClient, DonjonError, Draw, msgpack, verifyExport } from "../src/index.js";
import type {
  Ack, ChangeDetail, Command, ExportBody, GameAssets, GameEvent, KeysBody, ReadyBody, RematchBody, RematchDetail,
  SeatEntry, ServerFrame, TakeSeatBody,
} from "../src/index.js";

export async function playOneMove(baseUrl: string): Promise<number> {
  const client = new DonjonClient(baseUrl);
  const catalog = await client.catalog();
  const game: string = catalog.games[0].id;
  const { id } = await client.createGame({ game, seats: catalog.games[0].min_seats, options: {} });
  const seat: TakeSeatBody = await client.takeSeat(id, { name: "Ada" });
  const conn = client.connect(id, { token: seat.token, codec: "msgpack" });
  const off = conn.on("change", (detail: ChangeDetail) => {
    const versions: number[] = detail.events.map((event: GameEvent) => event.version);
    void versions;
  });
  conn.on("connection", ({ state, code }) => void [state.toUpperCase(), code]);
  conn.on("error", (error: DonjonError) => void error.code.length);
  await conn.ready;
  const move: Command | undefined = conn.legal[0];
  let version = conn.version ?? 0;
  if (move) {
    try {
      const ack: Ack = await conn.send(move, { expectedVersion: version });
      version = ack.duplicate ? version : ack.version;
    } catch (error) {
      if (error instanceof DonjonError && error.code === "conflict") version = -1;
    }
  }
  for await (const event of client.allEvents(id, { token: seat.token })) version = Math.max(version, event.version);
  const page = await client.events(id, { from: 1, limit: 10 });
  const state = await client.state(id, { at: page.version });
  const lobby = await client.listGames({ status: "active", limit: 5 });
  const frame = msgpack.decode(msgpack.encode({ type: "ack", id: "x", version: 1, duplicate: false })) as ServerFrame;
  if (frame.type === "ack") version += frame.version;
  off();
  conn.close();
  return version + state.version + lobby.games.length;
}

/** Resign or undo, then play the rematch with the old token: the lifecycle API of v1.2. */
export async function leaveAndPlayAgain(baseUrl: string, id: string, token: string): Promise<string> {
  const client = new DonjonClient(baseUrl);
  const { id: practice } = await client.createGame({ game: "castle", undo: false, clock: { per_move_s: 30 } });
  const conn = client.connect(id, { token });
  const learned = new Promise<RematchDetail>((resolve) => conn.on("rematch", resolve));
  await conn.ready;
  let ack: Ack;
  try {
    ack = conn.canUndo ? await conn.undo() : await conn.resign({ id: "leave" });
  } catch (error) {
    if (!(error instanceof DonjonError) || (error.code !== "undo_refused" && error.code !== "game_over")) throw error;
    ack = { id: "none", version: conn.version ?? 0, duplicate: false };
  }
  const asked: RematchBody = await client.rematch(id, { token });
  const { id: linked, version }: RematchDetail = await learned;
  const known: string | null = conn.rematch;
  const seat: TakeSeatBody = await client.takeSeat(asked.id, { token });
  conn.close();
  return `${practice} ${ack.version} ${linked === known} ${version} ${asked.seat} ${seat.token}`;
}

export async function auditExport(file: unknown, nodeKey: string): Promise<string> {
  const report = await verifyExport(file, { key: nodeKey });
  const stream = new Draw(new Uint8Array(32), "g1", 7);
  const failed = report.checks.find((c) => !c.ok);
  return failed ? `${failed.name}: ${failed.detail}` : `${report.events} events, ${String(stream.below(6))}`;
}

/** Every route of the contract through its typed method, and `request` for anything else. */
export async function everyRoute(baseUrl: string, finished: string): Promise<string> {
  const client = new DonjonClient(baseUrl);
  const { status }: { status: "ok" } = await client.health();
  const ready: ReadyBody = await client.ready();
  const metrics: string = await client.metrics();
  const documents = [await client.openapi(), await client.asyncapi()];
  const { keys }: KeysBody = await client.keys();
  const assets: GameAssets = await client.gameAssets("carcassonne");
  const exported: ExportBody = await client.exportGame(finished);
  const report = await verifyExport(exported, { trustedKeys: await client.keys() });
  const pinned: "pinned" | "unpinned" | "refused" | "unchecked" = report.signer;
  const byKey = await verifyExport(exported, { trustedKeys: keys.map((k) => k.public_key) });
  const { id } = await client.createGame({ game: "castle_panic", clock: { per_move_s: 0.5 }, spectator_delay: { seconds: 1.5 } });
  const seats: SeatEntry[] = (await client.getGame(id)).seats;
  const away: boolean = seats.some((seat) => seat.away === true);
  const raw = await client.request<{ status: string }>("GET", "/healthz");
  const text: string = await client.request<string>("GET", "/metrics", { responseType: "text" });
  const tiles = Object.keys(assets.tiles ?? {}).length + (assets.ports?.length ?? 0);
  return [status, ready.status, metrics.length, documents.length, tiles, report.ok, pinned, byKey.keyId, exported.chain.head, away, raw.status,
    text.length, ready.error?.code ?? "none"].join(" ");
}

// playFromLegal: a seat that plays any game from `legal` alone (the recipe of docs/protocol.md,
// "Views and legal"): whenever the view offers moves, send one at that version, wait for the next view.

// A player out to finish the game takes nothing back: `undo` only when it is all there is.
const pickAtRandom = (legal) => {
  const moves = legal.filter((move) => move.type !== "undo");
  const from = moves.length > 0 ? moves : legal;
  return from[Math.floor(Math.random() * from.length)];
};

/**
 * Resolves when the game is finished and this seat has no command in flight; rejects with the
 * first DonjonError that is not a lost race (`conflict`): a move taken from `legal` at the
 * version it was offered is never refused otherwise.
 * @param {import("./connection.js").GameConnection} conn
 * @param {{choose?: (legal: object[], conn: object) => object}} [options]
 */
export function playFromLegal(conn, { choose = pickAtRandom } = {}) {
  return new Promise((resolve, reject) => {
    let busy = false;
    let stopped = false;
    const unsubscribe = [];
    const stop = (settle, value) => {
      if (stopped) return;
      stopped = true;
      for (const off of unsubscribe) off();
      settle(value);
    };
    const step = async () => {
      if (stopped || busy) return;
      if (conn.status === "finished") return stop(resolve, conn);
      if (conn.status !== "active" || conn.legal.length === 0) return;
      busy = true;
      const at = conn.version;
      try {
        await conn.send(choose(conn.legal, conn), { expectedVersion: at });
      } catch (error) {
        if (error?.code !== "conflict") return stop(reject, error);
      } finally {
        busy = false;
      }
      if (conn.version > at) step();
    };
    unsubscribe.push(conn.on("change", step));
    unsubscribe.push(conn.on("error", (error) => stop(reject, error)));
    conn.ready.then(step, (error) => stop(reject, error));
  });
}

// DonjonError: every refusal the client surfaces, from HTTP bodies, error frames and the client itself.

/** Codes the client itself uses (the server's codes are listed in docs/protocol.md). */
export const CLIENT_CODES = Object.freeze({
  NETWORK: "network", // the HTTP request did not reach the service
  HTTP: "http_error", // an HTTP answer without the documented error body
  CLOSED: "closed", // the connection was closed for good (close(), or a close code that forbids retrying)
  PROTOCOL: "protocol_error", // the server sent something the protocol does not allow
  NO_RANDOM: "no_random", // no crypto.getRandomValues to make a seat's client_seed with (pass one, or null)
});

export class DonjonError extends Error {
  /**
   * @param {string} code stable code: the server's (docs/protocol.md) or one of CLIENT_CODES
   * @param {string} message for humans
   * @param {{status?: number, id?: string, closeCode?: number, cause?: unknown}} [extra]
   */
  constructor(code, message, extra = {}) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = "DonjonError";
    this.code = code;
    if (extra.status !== undefined) this.status = extra.status;
    if (extra.id !== undefined) this.id = extra.id;
    if (extra.closeCode !== undefined) this.closeCode = extra.closeCode;
  }
}

/**
 * Refuse what the client would otherwise drop: an option it does not know (a misspelt `token`,
 * a query parameter the server would ignore), with `bad_request` naming it, as the server does
 * for a body field it does not know. Returns `given` (or `{}`).
 * @param {string} what the method, for the message ("listGames")
 * @param {object | undefined | null} given
 * @param {readonly string[]} known
 */
export function refuseUnknown(what, given, known) {
  const options = given ?? {};
  if (typeof options !== "object" || Array.isArray(options)) {
    throw new DonjonError("bad_request", `${what} takes an object of options, not ${JSON.stringify(options)}`);
  }
  const unknown = Object.keys(options).filter((key) => !known.includes(key)).sort();
  if (unknown.length) {
    const list = known.length ? known.join(", ") : "none";
    throw new DonjonError("bad_request", `${what} has no option '${unknown[0]}' (unknown: ${unknown.join(", ")}; options: ${list})`);
  }
  return options;
}

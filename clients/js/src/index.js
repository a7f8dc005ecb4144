// @donjon/client: the lobby routes (DonjonClient) and a game's live connection (GameConnection).
export { DonjonClient, newClientSeed } from "./client.js";
export { GameConnection, MSGPACK_SUBPROTOCOL } from "./connection.js";
export { DonjonError, CLIENT_CODES } from "./errors.js";
export { TokenBucket } from "./bucket.js";
export * as msgpack from "./msgpack.js";
export { playFromLegal } from "./autoplay.js";
export { verifyExport, verifyExportText } from "./audit.js";
export { EXPORT_FORMATS, keyIdOf, STRONG_SCHEMES_SINCE } from "./trust.js";
export { Draw } from "./fairness.js";

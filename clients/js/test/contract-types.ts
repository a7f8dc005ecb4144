// src/index.d.ts held to the contract's JSON Schemas, under strict tsc: `./generated.js` is what
// openapi-typescript generates (in a temporary folder, by contract.test.js) from openapi.json's
// schemas with asyncapi.json's frames beside them. Each pair is assignable both ways (`same`):
// a field's type, optionality or presence that differs between the two fails the compile, naming
// it. Where the client's type is wider on purpose, only the way that matters is checked, and why.

import type * as client from "@donjon/client";
import type { components } from "./generated.js";

type S = components["schemas"];

/** Both ways: the client's type and the contract's describe the same values. */
function same<A, B>(_toContract: (value: A) => B, _toClient: (value: B) => A): void {}
/** One way: every value of the contract's type is one of the client's (the client reads it). */
function reads<Contract, Client>(_read: (value: Contract) => Client): void {}
const id = <T>(value: T): T => value;

// shared shapes
same<client.Command, S["Command"]>(id, id);
same<client.Clock, S["Clock"]>(id, id);
same<client.View, S["View"]>(id, id);
same<client.SeatEntry, S["Seat"]>(id, id);
same<client.GameEvent, S["Event"]>(id, id);
same<client.GameStatus, S["Status"]>(id, id);
same<client.OptionValue, S["OptionValue"]>(id, id);
same<client.OptionSpec, S["OptionSpec"]>(id, id);
same<client.CatalogEntry, S["CatalogEntry"]>(id, id);
// the client's ErrorCode adds its own codes (network, closed, ...) and any game's rule code
reads<S["ErrorCode"], client.ErrorCode>(id);
reads<S["Error"], client.ErrorBody>(id);

// HTTP bodies
same<client.CatalogBody, S["Catalog"]>(id, id);
same<client.CreateGameRequest, S["CreateGame"]>(id, id);
same<client.CreateGameBody, S["Created"]>(id, id);
// the client's request adds `token` (a rematch's old token, sent as Authorization) and
// `client_seed: null` (send none); without them it is the contract's body
same<Omit<client.TakeSeatRequest, "token" | "client_seed"> & { client_seed?: string }, S["TakeSeat"]>(id, id);
same<client.TakeSeatBody, S["Seated"]>(id, id);
same<client.RematchBody, S["Rematch"]>(id, id);
same<client.LobbyEntry, S["LobbyEntry"]>(id, id);
same<client.ListGamesBody, S["Lobby"]>(id, id);
same<client.GameBody, S["Game"]>(id, id);
same<client.EventsBody, S["EventsPage"]>(id, id);
same<client.StateBody, S["State"]>(id, id);
same<client.HealthBody, S["Health"]>(id, id);
// ready() resolves with the 503 answer's body too
same<client.ReadyBody, S["Ready"] | S["NotReady"]>(id, id);
same<client.GameAssets, S["GameAssets"]>(id, id);
same<client.NodeKey, S["Key"]>(id, id);
same<client.KeysBody, S["Keys"]>(id, id);
same<client.ExportBody, S["Export"]>(id, id);
same<client.LedgerPlace, S["LedgerPlace"]>(id, id);
same<client.Signature, S["Signature"]>(id, id);
same<client.LedgerEntry, S["LedgerEntry"]>(id, id);
same<client.LedgerHead, S["LedgerHead"]>(id, id);
same<client.LedgerBody, S["Ledger"]>(id, id);

// websocket frames (asyncapi.json)
same<client.HelloFrame, S["Hello"]>(id, id);
same<client.CommandFrame, S["CommandFrame"]>(id, id);
same<client.ClientFrame, S["ClientFrame"]>(id, id);
same<client.SnapshotFrame, S["Snapshot"]>(id, id);
same<client.UpdateFrame, S["Update"]>(id, id);
same<client.AckFrame, S["Ack"]>(id, id);
same<client.SpectatorsFrame, S["Spectators"]>(id, id);
reads<S["ErrorFrame"], client.ErrorFrame>(id);
reads<S["ServerFrame"], client.ServerFrame>(id);
reads<S["CloseCode"], client.CloseCode>(id);

// A TCP proxy in front of the server, so a test can drop real connections the way a network does:
// `cut()` resets every connection at once; `mute()` stops passing the server's bytes to the client
// (the server still gets and applies what the client sends: an ack lost on the way back);
// `hold()` keeps the client's bytes back until `release()` hands them to the server in one write,
// so frames the client sent one by one arrive together (a burst, whatever the timing).

import { createServer, connect } from "node:net";

export class Proxy {
  constructor(targetPort) {
    this.targetPort = targetPort;
    this.pairs = new Set();
    this.muted = false;
    this.holding = false;
    this.server = createServer((client) => this.pipe(client));
  }

  listen() {
    return new Promise((resolve) => this.server.listen(0, "127.0.0.1", () => resolve(this)));
  }

  get url() {
    return `http://127.0.0.1:${this.server.address().port}`;
  }

  pipe(client) {
    const upstream = connect(this.targetPort, "127.0.0.1");
    const pair = { client, upstream, held: [] };
    this.pairs.add(pair);
    client.on("data", (chunk) => (this.holding ? pair.held.push(chunk) : upstream.write(chunk)));
    upstream.on("data", (chunk) => this.muted || client.write(chunk));
    const end = () => {
      this.pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const socket of [client, upstream]) {
      socket.on("error", end);
      socket.on("close", end);
    }
  }

  mute() {
    this.muted = true;
  }

  hold() {
    this.holding = true;
  }

  release() {
    this.holding = false;
    for (const pair of this.pairs) {
      if (pair.held.length) pair.upstream.write(Buffer.concat(pair.held.splice(0)));
    }
  }

  /** Reset every open connection (the client sees 1006) and pass bytes again for new ones. */
  cut() {
    for (const { client, upstream } of this.pairs) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    this.pairs.clear();
    this.muted = false;
  }

  get connections() {
    return this.pairs.size;
  }

  close() {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

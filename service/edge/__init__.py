"""The edge: where clients meet the service. HTTP routes, the websocket endpoint, the wire
formats, who may call from a browser, the app keys, and the stream reader that pushes to sockets."""

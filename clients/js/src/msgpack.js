// A small MessagePack codec (the spec's formats that JSON-like data uses, plus bin and ext), so the
// client needs no dependency and loads in a browser as a plain module. Maps decode to plain
// objects; integers beyond 2^53 decode to BigInt; bin to Uint8Array; ext to {extType, data}.

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8", { fatal: true });

class Writer {
  constructor() {
    this.bytes = new Uint8Array(256);
    this.view = new DataView(this.bytes.buffer);
    this.length = 0;
  }

  reserve(size) {
    if (this.length + size <= this.bytes.length) return;
    let capacity = this.bytes.length * 2;
    while (capacity < this.length + size) capacity *= 2;
    const bytes = new Uint8Array(capacity);
    bytes.set(this.bytes.subarray(0, this.length));
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer);
  }

  /** Append a format byte and a big-endian number of `size` bytes (1, 2, 4, 8; "f" for float64). */
  head(format, size, value) {
    this.reserve(9);
    this.bytes[this.length++] = format;
    const at = this.length;
    if (size === 1) this.view.setUint8(at, value);
    else if (size === 2) this.view.setUint16(at, value);
    else if (size === 4) this.view.setUint32(at, value);
    else if (size === 8) this.view.setBigUint64(at, BigInt.asUintN(64, BigInt(value)));
    else if (size === "f") this.view.setFloat64(at, value);
    this.length += size === "f" ? 8 : size;
  }

  raw(bytes) {
    this.reserve(bytes.length);
    this.bytes.set(bytes, this.length);
    this.length += bytes.length;
  }

  /** A length header from the fix/8/16/32 family: `fix` is null where the family has none. */
  sized(length, fix, fixMax, f8, f16, f32) {
    if (fix !== null && length <= fixMax) this.head(fix | length, 0);
    else if (f8 !== null && length < 0x100) this.head(f8, 1, length);
    else if (length < 0x10000) this.head(f16, 2, length);
    else this.head(f32, 4, length);
  }
}

function writeInteger(w, value) {
  if (value >= 0) {
    if (value < 0x80) w.head(value, 0);
    else if (value < 0x100) w.head(0xcc, 1, value);
    else if (value < 0x10000) w.head(0xcd, 2, value);
    else if (value < 0x100000000) w.head(0xce, 4, value);
    else w.head(0xcf, 8, value);
  } else if (value >= -32) w.head(value & 0xff, 0);
  else if (value >= -0x80) w.head(0xd0, 1, value & 0xff);
  else if (value >= -0x8000) w.head(0xd1, 2, value & 0xffff);
  else if (value >= -0x80000000) w.head(0xd2, 4, value >>> 0);
  else w.head(0xd3, 8, value);
}

function writeValue(w, value) {
  if (value === null || value === undefined) w.head(0xc0, 0);
  else if (value === false) w.head(0xc2, 0);
  else if (value === true) w.head(0xc3, 0);
  else if (typeof value === "number") {
    if (Number.isSafeInteger(value)) writeInteger(w, value);
    else w.head(0xcb, "f", value);
  } else if (typeof value === "bigint") {
    if (value < -(2n ** 63n) || value >= 2n ** 64n) throw new RangeError(`msgpack: ${value} does not fit 64 bits`);
    if (value >= 0n) w.head(0xcf, 8, value);
    else w.head(0xd3, 8, value);
  } else if (typeof value === "string") {
    const bytes = utf8Encoder.encode(value);
    w.sized(bytes.length, 0xa0, 31, 0xd9, 0xda, 0xdb);
    w.raw(bytes);
  } else if (value instanceof Uint8Array || value instanceof ArrayBuffer) {
    const bytes = value instanceof ArrayBuffer ? new Uint8Array(value) : value;
    w.sized(bytes.length, null, 0, 0xc4, 0xc5, 0xc6);
    w.raw(bytes);
  } else if (Array.isArray(value)) {
    w.sized(value.length, 0x90, 15, null, 0xdc, 0xdd);
    for (const item of value) writeValue(w, item);
  } else if (typeof value === "object") {
    const entries = Object.entries(value).filter(([, item]) => item !== undefined); // as JSON does
    w.sized(entries.length, 0x80, 15, null, 0xde, 0xdf);
    for (const [key, item] of entries) {
      writeValue(w, key);
      writeValue(w, item);
    }
  } else {
    throw new TypeError(`msgpack: cannot encode a ${typeof value}`);
  }
}

/** @param {unknown} value @returns {Uint8Array} */
export function encode(value) {
  const w = new Writer();
  writeValue(w, value);
  return w.bytes.slice(0, w.length);
}

class Reader {
  constructor(bytes) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.at = 0;
  }

  need(size) {
    if (this.at + size > this.bytes.length) throw new RangeError("msgpack: data ends inside a value");
    const at = this.at;
    this.at += size;
    return at;
  }

  u8() {
    return this.view.getUint8(this.need(1));
  }

  u16() {
    return this.view.getUint16(this.need(2));
  }

  u32() {
    return this.view.getUint32(this.need(4));
  }

  take(size) {
    const at = this.need(size);
    return this.bytes.subarray(at, at + size);
  }
}

function smallest(big) {
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

function readArray(r, length) {
  const items = new Array(length);
  for (let i = 0; i < length; i++) items[i] = readValue(r);
  return items;
}

function readMap(r, length) {
  const map = {};
  for (let i = 0; i < length; i++) {
    const key = readValue(r);
    if (typeof key !== "string" && typeof key !== "number") throw new TypeError("msgpack: map keys must be strings or numbers");
    Object.defineProperty(map, String(key), { value: readValue(r), enumerable: true, writable: true, configurable: true });
  }
  return map;
}

function readString(r, length) {
  return utf8Decoder.decode(r.take(length));
}

function readExt(r, length) {
  const extType = r.view.getInt8(r.need(1));
  return { extType, data: r.take(length).slice() };
}

function readValue(r) {
  const byte = r.u8();
  if (byte < 0x80) return byte;
  if (byte < 0x90) return readMap(r, byte & 0x0f);
  if (byte < 0xa0) return readArray(r, byte & 0x0f);
  if (byte < 0xc0) return readString(r, byte & 0x1f);
  if (byte >= 0xe0) return byte - 0x100;
  switch (byte) {
    case 0xc0: return null;
    case 0xc2: return false;
    case 0xc3: return true;
    case 0xc4: return r.take(r.u8()).slice();
    case 0xc5: return r.take(r.u16()).slice();
    case 0xc6: return r.take(r.u32()).slice();
    case 0xc7: return readExt(r, r.u8());
    case 0xc8: return readExt(r, r.u16());
    case 0xc9: return readExt(r, r.u32());
    case 0xca: return r.view.getFloat32(r.need(4));
    case 0xcb: return r.view.getFloat64(r.need(8));
    case 0xcc: return r.u8();
    case 0xcd: return r.u16();
    case 0xce: return r.u32();
    case 0xcf: return smallest(r.view.getBigUint64(r.need(8)));
    case 0xd0: return r.view.getInt8(r.need(1));
    case 0xd1: return r.view.getInt16(r.need(2));
    case 0xd2: return r.view.getInt32(r.need(4));
    case 0xd3: return smallest(r.view.getBigInt64(r.need(8)));
    case 0xd4: return readExt(r, 1);
    case 0xd5: return readExt(r, 2);
    case 0xd6: return readExt(r, 4);
    case 0xd7: return readExt(r, 8);
    case 0xd8: return readExt(r, 16);
    case 0xd9: return readString(r, r.u8());
    case 0xda: return readString(r, r.u16());
    case 0xdb: return readString(r, r.u32());
    case 0xdc: return readArray(r, r.u16());
    case 0xdd: return readArray(r, r.u32());
    case 0xde: return readMap(r, r.u16());
    case 0xdf: return readMap(r, r.u32());
    default: throw new TypeError(`msgpack: 0x${byte.toString(16)} is not a format byte`);
  }
}

/** @param {Uint8Array | ArrayBuffer} data one whole value @returns {unknown} */
export function decode(data) {
  const r = new Reader(data instanceof Uint8Array ? data : new Uint8Array(data));
  const value = readValue(r);
  if (r.at !== r.bytes.length) throw new RangeError(`msgpack: ${r.bytes.length - r.at} bytes after the value`);
  return value;
}

// AES-256-GCM decryption (FIPS 197, NIST SP 800-38D) for pages without WebCrypto: the audit opens
// the sealed parts of an export's events (docs/fairness.md, "Sealed at rest") with crypto.subtle
// where the page has it (secure contexts) and with this everywhere else, with the same result
// (the tests compare both). Only what opening needs: the forward cipher, counter mode, GHASH, a
// 96-bit nonce and a 128-bit tag. Slow (BigInt GHASH), which is fine for the few hundred short
// parts of a game.

const SBOX = new Uint8Array(256);
{
  // The S-box: the multiplicative inverse in GF(2^8) (x^8 + x^4 + x^3 + x + 1), then the affine map.
  let p = 1;
  let q = 1;
  do {
    p = p ^ ((p << 1) & 0xff) ^ (p & 0x80 ? 0x1b : 0); // p * 3
    q ^= q << 1; // q / 3
    q ^= q << 2;
    q ^= q << 4;
    q &= 0xff;
    if (q & 0x80) q ^= 0x09;
    const rotl = (x, n) => ((x << n) | (x >>> (8 - n))) & 0xff;
    SBOX[p] = q ^ rotl(q, 1) ^ rotl(q, 2) ^ rotl(q, 3) ^ rotl(q, 4) ^ 0x63;
  } while (p !== 1);
  SBOX[0] = 0x63;
}

const xtime = (b) => ((b << 1) ^ (b & 0x80 ? 0x1b : 0)) & 0xff;

/** The 15 round keys of a 32-byte key, as 240 bytes. */
function expandKey(key) {
  if (key.length !== 32) throw new RangeError(`AES-256 needs a 32-byte key, got ${key.length}`);
  const w = new Uint8Array(240);
  w.set(key);
  let rcon = 1;
  for (let i = 32; i < 240; i += 4) {
    let t = w.slice(i - 4, i);
    if (i % 32 === 0) {
      t = Uint8Array.of(SBOX[t[1]] ^ rcon, SBOX[t[2]], SBOX[t[3]], SBOX[t[0]]);
      rcon = xtime(rcon);
    } else if (i % 32 === 16) {
      t = t.map((b) => SBOX[b]);
    }
    for (let j = 0; j < 4; j++) w[i + j] = w[i - 32 + j] ^ t[j];
  }
  return w;
}

/** One block through the forward cipher (14 rounds). */
function encryptBlock(roundKeys, block) {
  let s = block.map((b, i) => b ^ roundKeys[i]);
  for (let round = 1; round <= 14; round++) {
    const t = new Uint8Array(16);
    for (let c = 0; c < 4; c++) {
      for (let r = 0; r < 4; r++) t[c * 4 + r] = SBOX[s[((c + r) % 4) * 4 + r]]; // SubBytes, ShiftRows
    }
    if (round < 14) {
      for (let c = 0; c < 4; c++) {
        const [a0, a1, a2, a3] = t.subarray(c * 4, c * 4 + 4);
        const all = a0 ^ a1 ^ a2 ^ a3;
        t[c * 4] = a0 ^ all ^ xtime(a0 ^ a1);
        t[c * 4 + 1] = a1 ^ all ^ xtime(a1 ^ a2);
        t[c * 4 + 2] = a2 ^ all ^ xtime(a2 ^ a3);
        t[c * 4 + 3] = a3 ^ all ^ xtime(a3 ^ a0);
      }
    }
    s = t.map((b, i) => b ^ roundKeys[round * 16 + i]);
  }
  return s;
}

const toBig = (bytes) => bytes.reduce((n, b) => (n << 8n) | BigInt(b), 0n);
const R = 0xe1n << 120n;

/** X * Y in GCM's GF(2^128) (SP 800-38D, algorithm 1). */
function gfMultiply(x, y) {
  let z = 0n;
  let v = y;
  for (let i = 127n; i >= 0n; i--) {
    if ((x >> i) & 1n) z ^= v;
    v = v & 1n ? (v >> 1n) ^ R : v >> 1n;
  }
  return z;
}

function ghash(h, ...parts) {
  let x = 0n;
  for (const part of parts) {
    for (let at = 0; at < part.length; at += 16) {
      const block = new Uint8Array(16);
      block.set(part.subarray(at, at + 16));
      x = gfMultiply(x ^ toBig(block), h);
    }
  }
  return x;
}

function counterBlock(nonce, counter) {
  const block = new Uint8Array(16);
  block.set(nonce);
  new DataView(block.buffer).setUint32(12, counter);
  return block;
}

/**
 * Open an AES-256-GCM sealed message: `sealed` is the ciphertext with its 16-byte tag appended
 * (what WebCrypto's decrypt takes). The plaintext, or an Error when the tag does not match.
 */
export function aesGcmOpen(key, nonce, sealed, associatedData) {
  if (nonce.length !== 12) throw new RangeError("the nonce must be 12 bytes");
  if (sealed.length < 16) throw new Error("the sealed message is shorter than its tag");
  const roundKeys = expandKey(key);
  const h = toBig(encryptBlock(roundKeys, new Uint8Array(16)));
  const ciphertext = sealed.subarray(0, sealed.length - 16);
  const lengths = new Uint8Array(16);
  const view = new DataView(lengths.buffer);
  view.setBigUint64(0, BigInt(associatedData.length * 8));
  view.setBigUint64(8, BigInt(ciphertext.length * 8));
  const mask = toBig(encryptBlock(roundKeys, counterBlock(nonce, 1)));
  const tag = (ghash(h, associatedData, ciphertext, lengths) ^ mask).toString(16).padStart(32, "0");
  const given = Array.from(sealed.subarray(sealed.length - 16), (b) => b.toString(16).padStart(2, "0")).join("");
  if (tag !== given) throw new Error("the tag does not match: not sealed with this key for this place");
  const plaintext = new Uint8Array(ciphertext.length);
  for (let at = 0; at < ciphertext.length; at += 16) {
    const stream = encryptBlock(roundKeys, counterBlock(nonce, 2 + at / 16));
    for (let i = 0; i < 16 && at + i < ciphertext.length; i++) plaintext[at + i] = ciphertext[at + i] ^ stream[i];
  }
  return plaintext;
}

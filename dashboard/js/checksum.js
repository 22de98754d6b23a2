// EIP-55 checksums: every address the page shows is written in its mixed-case form, whether the
// API typed it as an Address (already checksummed) or handed it over inside an event's data as the
// chain logged it (lower case). The browser has no Keccak-256, so it is written here, for inputs
// of one block (an address's 40 hex digits).

const MASK = (1n << 64n) - 1n;
const rotl = (x, n) => (n === 0 ? x : ((x << BigInt(n)) | (x >> BigInt(64 - n))) & MASK);

/** The 24 round constants, from the LFSR x^8 + x^6 + x^5 + x^4 + 1 (FIPS 202, 3.2.5). */
const ROUND_CONSTANTS = (() => {
  const out = [];
  let r = 1;
  for (let round = 0; round < 24; round++) {
    let c = 0n;
    for (let j = 0; j < 7; j++) {
      if (r & 1) c |= 1n << BigInt((1 << j) - 1);
      r = r & 0x80 ? ((r << 1) ^ 0x71) & 0xff : (r << 1) & 0xff;
    }
    out.push(c);
  }
  return out;
})();

/** Keccak-f[1600] on 25 lanes (index x + 5y), in place. */
function permute(s) {
  for (const rc of ROUND_CONSTANTS) {
    const c = [0, 1, 2, 3, 4].map((x) => s[x] ^ s[x + 5] ^ s[x + 10] ^ s[x + 15] ^ s[x + 20]);
    for (let x = 0; x < 5; x++) {
      const d = c[(x + 4) % 5] ^ rotl(c[(x + 1) % 5], 1);
      for (let y = 0; y < 25; y += 5) s[y + x] ^= d;
    }
    let [x, y, current] = [1, 0, s[1]];
    for (let t = 0; t < 24; t++) {
      [x, y] = [y, (2 * x + 3 * y) % 5];
      const next = s[x + 5 * y];
      s[x + 5 * y] = rotl(current, ((t + 1) * (t + 2) / 2) % 64);
      current = next;
    }
    for (let y = 0; y < 25; y += 5) {
      const row = s.slice(y, y + 5);
      for (let x = 0; x < 5; x++) s[y + x] = row[x] ^ (~row[(x + 1) % 5] & MASK & row[(x + 2) % 5]);
    }
    s[0] ^= rc;
  }
}

/** Keccak-256 (Ethereum's, before SHA-3's padding) of fewer than 136 bytes. */
export function keccak256(bytes) {
  const rate = 136;
  const block = new Uint8Array(rate);
  block.set(bytes);
  block[bytes.length] ^= 0x01;
  block[rate - 1] ^= 0x80;
  const s = new Array(25).fill(0n);
  for (let i = 0; i < rate / 8; i++) {
    let lane = 0n;
    for (let b = 7; b >= 0; b--) lane = (lane << 8n) | BigInt(block[i * 8 + b]);
    s[i] ^= lane;
  }
  permute(s);
  const out = [];
  for (let i = 0; i < 4; i++) for (let b = 0; b < 8; b++) out.push(Number((s[i] >> BigInt(8 * b)) & 0xffn));
  return out;
}

/** `addr` (0x and 40 hex digits, any case) in its EIP-55 form. */
export function checksum(addr) {
  const hex = addr.slice(2).toLowerCase();
  const digest = keccak256(new TextEncoder().encode(hex));
  const nibble = (i) => (digest[i >> 1] >> (i % 2 ? 0 : 4)) & 0xf;
  return `0x${[...hex].map((c, i) => (nibble(i) >= 8 ? c.toUpperCase() : c)).join('')}`;
}

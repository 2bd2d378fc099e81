/*
 * The JSON tape scanner of raw_json.ts, compiled to WebAssembly (build.ts builds it into
 * scan_module.ts). It writes the same tape, container ends and key hashes as the JavaScript
 * scanner, for the same bytes, and declines the same documents; raw_json_test.ts runs every
 * corpus against both and compares their tapes on generated and mutated documents.
 *
 * What it leaves to JavaScript (scan returns RETRY_IN_JS): keys with backslash escapes (their
 * text, hash and index-key test need the decoded string) and tapes past the capacity reserved.
 * Two lists finish the tape in JavaScript: keys that are not ASCII (their text is decoded) and
 * numbers whose spelling JavaScript may or may not keep (it writes them back to know).
 *
 * The input is followed by PAD zero bytes: a zero is neither whitespace, nor a token, nor a
 * valid string byte, so every loop stops at the end of the input without a bounds check, and
 * the 16-byte loads of the string loop stay inside memory.
 */

#include <wasm_simd128.h>

#include "tape.h"

#define MAX_DEPTH 256
#define PAD 16
#define DECLINED (-1)
#define RETRY_IN_JS (-2)
#define FNV_OFFSET 0x811c9dc5u
#define FNV_PRIME 0x01000193u
#define NUMBER_CANONICAL 0
#define NUMBER_IRREGULAR 1
#define NUMBER_DOUBTED 2

extern u8 __heap_base;

static u8 *input;
static i32 *tape;
static i32 *ends;
static i32 *key_records;
static i32 *doubted;
static u32 capacity;
static u32 key_count;
static u32 doubted_count;
static i32 stack[MAX_DEPTH + 1];
static i32 marks[MAX_DEPTH + 1];
/* Per open object: one bit per key hash seen (hash >> 26), so most keys skip the repeat check. */
static u64 seen[MAX_DEPTH + 1];

/* 1 for the bytes that stand for themselves inside a JSON string: not '"', '\', controls, non-ASCII. */
static const u8 PLAIN[256] = {
#define R16(x) x, x, x, x, x, x, x, x, x, x, x, x, x, x, x, x
    R16(0), R16(0),
    1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, /* 0x20-0x2f: '"' is 0x22 */
    R16(1), R16(1),
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1, /* 0x50-0x5f: '\' is 0x5c */
    R16(1), R16(1),
    R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0), R16(0),
#undef R16
};

static inline u32 align16(u32 p) { return (p + 15) & ~15u; }

/*
 * Reserves room for an input of n bytes and the tape it can give (a record takes at least two
 * bytes of input, give or take the last), growing memory when needed. Returns where to write
 * the input, or 0 when memory cannot grow.
 */
EXPORT("prepare") u32 prepare(u32 n) {
  u32 cap = n / 2 + 4;
  u32 base = align16((u32)&__heap_base);
  u32 tape_at = align16(base + n + PAD);
  u64 need = (u64)tape_at + (u64)cap * (REC + 3) * 4;
  u64 have = (u64)__builtin_wasm_memory_size(0) * 65536u;
  if (need > have) {
    u64 pages = (need - have + 65535) / 65536;
    if (__builtin_wasm_memory_grow(0, (unsigned long)pages) == (unsigned long)-1) return 0;
  }
  input = (u8 *)base;
  tape = (i32 *)tape_at;
  ends = tape + cap * REC;
  key_records = ends + cap;
  doubted = key_records + cap;
  capacity = cap;
  return base;
}

EXPORT("tape") u32 tape_at(void) { return (u32)tape; }
EXPORT("ends") u32 ends_at(void) { return (u32)ends; }
EXPORT("key_records") u32 key_records_at(void) { return (u32)key_records; }
EXPORT("key_count") u32 key_count_of(void) { return key_count; }
EXPORT("doubted") u32 doubted_at(void) { return (u32)doubted; }
EXPORT("doubted_count") u32 doubted_count_of(void) { return doubted_count; }
/* Where the memory prepare() reserved ends (shift.c works from there). */
EXPORT("scan_end") u32 scan_end(void) { return (u32)(doubted + capacity); }

/*
 * Number spellings JavaScript was found to write back unchanged (see remember_number),
 * direct-mapped by hash: documents repeat their numbers, and a doubted number found here is
 * copied as spelled without asking JavaScript again. Whether a spelling is kept depends on its
 * bytes alone, so an entry never goes stale; a collision only replaces it.
 */
#define NUMBER_SLOTS 256
#define NUMBER_MAX 32
static u8 number_text[NUMBER_SLOTS][NUMBER_MAX];
static u8 number_length[NUMBER_SLOTS];

static inline u32 number_slot(const u8 *b, i32 start, i32 end) {
  u32 hash = FNV_OFFSET;
  for (i32 k = start; k < end; k++) hash = (hash ^ b[k]) * FNV_PRIME;
  return hash & (NUMBER_SLOTS - 1);
}

/* True when the number at b[start, end) is a spelling remembered as kept. */
static int known_number(const u8 *b, i32 start, i32 end) {
  i32 len = end - start;
  if (len > NUMBER_MAX) return 0;
  u32 slot = number_slot(b, start, end);
  if (number_length[slot] != len) return 0;
  for (i32 k = 0; k < len; k++)
    if (number_text[slot][k] != b[start + k]) return 0;
  return 1;
}

/* Remembers that JavaScript writes the number at input[start, end) of the last scan unchanged. */
EXPORT("remember_number") void remember_number(i32 start, i32 end) {
  i32 len = end - start;
  if (len <= 0 || len > NUMBER_MAX) return;
  u32 slot = number_slot(input, start, end);
  for (i32 k = 0; k < len; k++) number_text[slot][k] = input[start + k];
  number_length[slot] = (u8)len;
}


static inline int is_ws(u8 c) { return c == 0x20 || c == 0x0a || c == 0x0d || c == 0x09; }
static inline int is_digit(u8 c) { return c >= 0x30 && c <= 0x39; }
static inline int is_cont(u8 c) { return c >= 0x80 && c <= 0xbf; }
static inline int is_hex(u8 c) {
  return is_digit(c) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);
}

/* The length of the valid UTF-8 sequence at b (RFC 3629: no overlongs, surrogates or past U+10FFFF), or 0. */
static inline i32 utf8_length(const u8 *b) {
  u8 c = b[0], c1 = b[1];
  if (c >= 0xc2 && c <= 0xdf) return is_cont(c1) ? 2 : 0;
  if (c >= 0xe0 && c <= 0xef) {
    u8 lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
    return c1 >= lo && c1 <= hi && is_cont(b[2]) ? 3 : 0;
  }
  if (c >= 0xf0 && c <= 0xf4) {
    u8 lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
    return c1 >= lo && c1 <= hi && is_cont(b[2]) && is_cont(b[3]) ? 4 : 0;
  }
  return 0;
}

/* The length of the valid escape at b (a backslash), or 0. */
static inline i32 escape_length(const u8 *b) {
  u8 e = b[1];
  if (e == 0x22 || e == 0x5c || e == 0x2f || e == 0x62 || e == 0x66 || e == 0x6e || e == 0x72 ||
      e == 0x74) {
    return 2;
  }
  if (e != 0x75) return 0;
  return is_hex(b[2]) && is_hex(b[3]) && is_hex(b[4]) && is_hex(b[5]) ? 6 : 0;
}

/* The first byte from i on that does not stand for itself in a string (16 at a time). */
static inline i32 plain_run(const u8 *b, i32 i) {
  const v128_t quote = wasm_i8x16_splat(0x22), backslash = wasm_i8x16_splat(0x5c);
  const v128_t space = wasm_u8x16_splat(0x20);
  for (;;) {
    v128_t v = wasm_v128_load(b + i);
    /* Bytes below 0x20 or from 0x80 on: signed, those are the ones below 0x20 as signed. */
    v128_t special = wasm_v128_or(wasm_i8x16_lt(v, space),
                                  wasm_v128_or(wasm_i8x16_eq(v, quote), wasm_i8x16_eq(v, backslash)));
    u32 mask = wasm_i8x16_bitmask(special);
    if (mask != 0) return i + __builtin_ctz(mask);
    i += 16;
  }
}

/* True for a canonical array index ("0" ... "4294967294"): objects order those first. */
static int is_index_key(const u8 *b, i32 start, i32 end) {
  i32 len = end - start;
  if (len > 10) return 0;
  if (b[start] == 0x30) return len == 1;
  u64 v = 0;
  for (i32 k = start; k < end; k++) {
    if (!is_digit(b[k])) return 0;
    v = v * 10 + (u64)(b[k] - 0x30);
  }
  return v < 4294967295ull;
}

static int same_bytes(const u8 *b, i32 s1, i32 e1, i32 s2, i32 e2) {
  if (e1 - s1 != e2 - s2) return 0;
  for (i32 k = 0; k < e1 - s1; k++)
    if (b[s1 + k] != b[s2 + k]) return 0;
  return 1;
}

/*
 * Scans the n input bytes written at prepare's address into the tape. Returns the number of
 * records, DECLINED (not valid JSON, or a document that must take the parsed path) or
 * RETRY_IN_JS.
 */
EXPORT("scan") i32 scan(i32 n) {
  u8 *b = input;
  for (i32 k = 0; k < PAD; k++) b[n + k] = 0;
  i32 i = 0, rec = 0, depth = 0, irregular = 0, key = 0;
  key_count = 0;
  doubted_count = 0;
  if (n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf) i = 3;
  while (is_ws(b[i])) i++;
  for (;;) {
    if ((u32)rec + 2 > capacity) return RETRY_IN_JS;
    if (key) {
      key = 0;
      if (b[i] != 0x22) return DECLINED;
      i32 start = ++i;
      u32 hash = FNV_OFFSET;
      int ascii = 1;
      for (;;) {
        u8 c = b[i];
        if (PLAIN[c]) {
          hash = (hash ^ c) * FNV_PRIME;
          i++;
          continue;
        }
        if (c == 0x22) break;
        if (c == 0x5c) return RETRY_IN_JS;
        i32 len = c < 0x80 ? 0 : utf8_length(b + i);
        if (len == 0) return DECLINED;
        for (i32 k = 0; k < len; k++) hash = (hash ^ b[i + k]) * FNV_PRIME;
        i += len;
        ascii = 0;
      }
      i32 o = rec * REC;
      if (ascii) {
        if (is_digit(b[start]) && is_index_key(b, start, i)) return DECLINED;
        tape[o] = K_STRING;
      } else {
        /* Written back as these very bytes (JSON.stringify leaves non-ASCII alone): regular. */
        tape[o] = K_ESCAPED;
        key_records[key_count++] = rec;
      }
      tape[o + 1] = start;
      tape[o + 2] = i;
      tape[o + 3] = (i32)hash;
      /* A repeated key: JSON.parse keeps the last value at the first key's place. */
      u64 bit = 1ull << (hash >> 26);
      if (seen[depth - 1] & bit) {
        i32 top = stack[depth - 1];
        for (i32 k = top + 1; k < rec; k = tape[(k + 1) * REC + 3]) {
          if (tape[k * REC + 3] == (i32)hash &&
              same_bytes(b, tape[k * REC + 1], tape[k * REC + 2], start, i)) {
            return DECLINED;
          }
        }
      }
      seen[depth - 1] |= bit;
      rec++;
      i++;
      if (is_ws(b[i])) {
        irregular++;
        while (is_ws(b[i])) i++;
      }
      if (b[i++] != 0x3a) return DECLINED;
      if (is_ws(b[i])) {
        irregular++;
        while (is_ws(b[i])) i++;
      }
    }
    /* A value. */
    u8 c = b[i];
    i32 o = rec * REC;
    if (c == 0x22) {
      i32 start = ++i;
      int escaped = 0;
      for (;;) {
        i = plain_run(b, i);
        u8 d = b[i];
        if (d == 0x22) break;
        i32 len;
        if (d == 0x5c) {
          len = escape_length(b + i);
          escaped = 1;
        } else {
          len = d < 0x80 ? 0 : utf8_length(b + i);
        }
        if (len == 0) return DECLINED;
        i += len;
      }
      if (escaped) irregular++;
      tape[o] = escaped ? K_ESCAPED : K_STRING;
      tape[o + 1] = start;
      tape[o + 2] = i;
      tape[o + 3] = ++rec;
      i++;
    } else if (c == 0x7b || c == 0x5b) {
      if (depth >= MAX_DEPTH) return DECLINED;
      marks[depth] = irregular;
      seen[depth] = 0;
      stack[depth++] = rec;
      tape[o] = c == 0x7b ? K_OBJECT : K_ARRAY;
      tape[o + 1] = i;
      tape[o + 2] = 0;
      rec++;
      i++;
      if (is_ws(b[i])) {
        irregular++;
        while (is_ws(b[i])) i++;
      }
      if (b[i] != (c == 0x7b ? 0x7d : 0x5d)) {
        key = c == 0x7b;
        continue;
      }
      i++;
      tape[o + 3] = rec;
      ends[rec - 1] = marks[depth - 1] == irregular ? i : -1;
      depth--;
    } else if (c == 0x2d || is_digit(c)) {
      /*
       * Copied as spelled (K_INT) when JavaScript surely writes it back the same way: no
       * exponent, at most 15 significant digits, no trailing zero after a point, not -0, not
       * below 1e-6. Surely not (irregular): a trailing zero, -0, below 1e-6 without an exponent,
       * an exponent JavaScript would not spell (`E`, no sign). Anything else is doubted and
       * listed: JavaScript reads and writes it back to know (raw_json.ts respelled), as the
       * JavaScript scanner does.
       */
      i32 start = i;
      if (c == 0x2d) i++;
      i32 int_start = i;
      if (b[i] == 0x30) {
        i++;
      } else if (b[i] >= 0x31 && b[i] <= 0x39) {
        while (is_digit(b[i])) i++;
      } else {
        return DECLINED;
      }
      i32 int_digits = i - int_start;
      int zero_int = int_digits == 1 && b[int_start] == 0x30;
      int verdict; /* NUMBER_CANONICAL, NUMBER_IRREGULAR or NUMBER_DOUBTED */
      if (b[i] == 0x2e) {
        i32 frac_start = ++i;
        if (!is_digit(b[i])) return DECLINED;
        while (is_digit(b[i])) i++;
        if (b[i - 1] == 0x30) {
          verdict = NUMBER_IRREGULAR;
        } else if (zero_int) {
          i32 zeros = 0;
          while (b[frac_start + zeros] == 0x30) zeros++;
          verdict = zeros >= 6                          ? NUMBER_IRREGULAR
                    : i - frac_start - zeros <= 15 ? NUMBER_CANONICAL
                                                   : NUMBER_DOUBTED;
        } else {
          verdict = i - frac_start + int_digits <= 15 ? NUMBER_CANONICAL : NUMBER_DOUBTED;
        }
      } else if (zero_int) {
        verdict = c == 0x2d ? NUMBER_IRREGULAR : NUMBER_CANONICAL;
      } else {
        verdict = int_digits <= 15 ? NUMBER_CANONICAL : NUMBER_DOUBTED;
      }
      if (b[i] == 0x65 || b[i] == 0x45) {
        int plain = b[i] == 0x65 && (b[i + 1] == 0x2b || b[i + 1] == 0x2d);
        i++;
        if (b[i] == 0x2b || b[i] == 0x2d) i++;
        if (!is_digit(b[i])) return DECLINED;
        while (is_digit(b[i])) i++;
        if (verdict != NUMBER_IRREGULAR) verdict = plain ? NUMBER_DOUBTED : NUMBER_IRREGULAR;
      }
      if (verdict == NUMBER_IRREGULAR) irregular++;
      if (verdict == NUMBER_DOUBTED) {
        if (known_number(b, start, i)) verdict = NUMBER_CANONICAL;
        else doubted[doubted_count++] = rec;
      }
      tape[o] = verdict == NUMBER_CANONICAL ? K_INT : K_NUMBER;
      tape[o + 1] = start;
      tape[o + 2] = i;
      tape[o + 3] = ++rec;
    } else {
      i32 kind, len;
      if (c == 0x74 && b[i + 1] == 0x72 && b[i + 2] == 0x75 && b[i + 3] == 0x65) {
        kind = K_TRUE, len = 4;
      } else if (c == 0x66 && b[i + 1] == 0x61 && b[i + 2] == 0x6c && b[i + 3] == 0x73 &&
                 b[i + 4] == 0x65) {
        kind = K_FALSE, len = 5;
      } else if (c == 0x6e && b[i + 1] == 0x75 && b[i + 2] == 0x6c && b[i + 3] == 0x6c) {
        kind = K_NULL, len = 4;
      } else {
        return DECLINED;
      }
      tape[o] = kind;
      tape[o + 1] = i;
      tape[o + 2] = i + len;
      tape[o + 3] = ++rec;
      i += len;
    }
    /* After a value: a comma and the next one, or the ends of the containers it closes. */
    for (;;) {
      if (is_ws(b[i])) {
        irregular++;
        while (is_ws(b[i])) i++;
      }
      if (depth == 0) return i == n ? rec : DECLINED;
      i32 top = stack[depth - 1];
      i32 t = top * REC;
      tape[t + 2]++;
      u8 d = b[i++];
      int object = tape[t] == K_OBJECT;
      if (d == 0x2c) {
        if (is_ws(b[i])) {
          irregular++;
          while (is_ws(b[i])) i++;
        }
        key = object;
        break;
      }
      if (d != (object ? 0x7d : 0x5d)) return DECLINED;
      tape[t + 3] = rec;
      ends[top] = marks[depth - 1] == irregular ? i : -1;
      depth--;
    }
  }
}

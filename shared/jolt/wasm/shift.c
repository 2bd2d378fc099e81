/*
 * A lone shift run over the scanner's tape (scan.c) and written as JSON, all in WebAssembly:
 * the output tree lives in an arena that is reset per document, so a transform allocates nothing
 * on the JavaScript heap. shift_wasm.ts compiles a spec into the program this walks; specs and
 * documents it does not cover are left to JavaScript (generated code, or the walker). The parsed
 * path is the reference: every shift test compares this, the JavaScript and it byte for byte.
 *
 * The walk and the writes follow shift_codegen.ts step by step (same order, same levels, same
 * K/G/I/R per level), `[#n]` counts as the walker's hashCount does, and the writer follows
 * writeOutput (shift_raw.ts), including the order JavaScript gives an object's keys: array-index
 * keys first, ascending, then the others in insertion order. Anything JavaScript would do with a
 * value it has to convert (numbers respelled, escaped strings, non-ASCII keys, scalars matched as
 * keys other than strings and booleans), and past the limits below, makes the run decline
 * (SHIFT_DECLINED): JavaScript then starts over on the same scan.
 */

#include "tape.h"

/* Program records: the constants of shift_wasm.ts. */
enum { T_COMPOSITE = 1, T_LEAF, T_TRANSPOSE_LEAF, T_TRANSPOSE_COMPOSITE, T_AT_LEAF, T_KEYED_LEAF };
enum { S_AVAILABLE, S_AVAILABLE_COMPUTED, S_COMPUTED, S_CONFLICT };
enum { SRC_INPUT, SRC_KEY };
enum { E_KEY, E_INDEX, E_APPEND, E_INDEX_REF, E_AMP, E_KEY_LOOKUP, E_INDEX_LOOKUP, E_INDEX_COUNT };
enum { KEY_REF, KEY_CONST };

#define SHIFT_DECLINED (-1)
#define SHIFT_NO_MEMORY (-2)
#define MAX_LEVELS 64
/* Ints per output path element: step, kind, then four that depend on the kind. */
#define ELEM 6
/* Memory the arena and the output may grow to, past which JavaScript runs the document. */
#define MEMORY_LIMIT (256u << 20)
/*
 * Members an output object may have here: members are found by walking a list, so an object with
 * thousands of them would cost quadratic time; JavaScript objects have hash tables for that.
 */
#define MAX_MEMBERS 512
/* MAX_SHIFT_INDEX of shift_write.ts: the largest index, and the most nulls a run pads with. */
#define MAX_SHIFT_INDEX 1000000
static i32 padding_left;
/* Steps a lookup path may have (MAX_LOOKUP_STEPS of shift_wasm.ts). */
#define MAX_LOOKUP_STEPS 16

/* A level's matched key: its text, its array index (I, or -2) and its one `*` capture (G). */
typedef struct {
  const u8 *p;
  i32 len;
  i32 index;
  const u8 *gp;
  i32 glen;
  i32 stable; /* the text stays where it is for the whole run (not in `digits`) */
  i32 derived; /* hash and aindex are known */
  i32 hash;
  i32 aindex; /* the text as an array index of a JavaScript object, -1, or -2 (see array_index) */
  u8 digits[12];
} Key;

enum { N_NULL, N_REF, N_STR, N_OBJ, N_ARR };

typedef struct Node Node;
typedef struct Member Member;
struct Member {
  const u8 *key;
  i32 klen;
  i32 hash;  /* FNV-1a of the key's bytes, as keyHash and the tape's key records have it */
  i32 index; /* the key as an array index (JavaScript orders those first), or -1 */
  Node *value;
  Member *next;
};
struct Node {
  i32 type;
  const u8 *p;  /* N_STR: text that needs no escaping */
  i32 len;
  Member *first, *last; /* N_OBJ */
  u64 seen;             /* N_OBJ: one bit per member hash (hash & 63), so most misses skip the list */
  i32 members;          /* N_OBJ: how many */
  Node **items; /* N_ARR */
  i32 n, cap;   /* N_ARR: length and room; N_OBJ: the array-index keys' count and the largest
                   of them, or -2 once one came out of ascending order */
};

/*
 * A value in the output tree: a Node, or a tape record r tagged as (r << 1) | 1 (a scalar, or an
 * input container nothing was written into), which costs no memory. Null (0) means absent.
 */
static inline int is_ref(const Node *v) { return ((u32)v & 1) != 0; }
static inline i32 ref_of(const Node *v) { return (i32)((u32)v >> 1); }
static inline i32 type_of(const Node *v) { return is_ref(v) ? N_REF : v->type; }

static const u8 *in;
static const i32 *tp;
static const i32 *ends;
static const i32 *prog;
static const u8 *strs;
static u8 *arena;
static u8 *arena_end;
static i32 failed;
static Key K[MAX_LEVELS];
static i32 R[MAX_LEVELS];
/*
 * Per level, how many of its children have matched so far (`[#n]`, the walker's hashCount): a
 * composite child counts once it is done, a leaf child only when it writes its input (not `$`,
 * `#`, `@` or `@(…)` leaves). A level's count starts at 0 when its key matches, except that `@`
 * and `@(…)` levels match as their parent and share its count (HC points at the parent's).
 */
static i32 counts[MAX_LEVELS];
static i32 *HC[MAX_LEVELS];

/* A level whose key just matched: its own count, from 0. */
static inline void new_count(i32 level) {
  HC[level] = &counts[level];
  counts[level] = 0;
}
static Node holder;
static Node null_node = {.type = N_NULL};
/*
 * The container an output path's last element goes into, kept per path prefix for the rest of
 * the run (as shift_codegen.ts keeps them): valid while `epoch` is the one it was found in, and
 * for the same `[&n]` indexes. Only prefixes of constants and such indexes are kept (the program
 * gives those a slot). A container is only ever displaced by becoming the first element of a
 * conflict array, which starts a new epoch; every run starts one too. 64 bits: it never wraps,
 * so a slot left from an earlier run can never look current.
 */
#define CACHE_SLOTS 1024
static u64 epoch;
#define CACHE_INDEXES 4
static u64 cache_epoch[CACHE_SLOTS];
static Node *cache_node[CACHE_SLOTS];
/* The indexes of the path's `[&n]` elements the container was found for. */
static i32 cache_index[CACHE_SLOTS][CACHE_INDEXES];
static u8 *out;
static u8 *out_end;
static u8 *out_start;

static u32 memory_top(void) { return (u32)__builtin_wasm_memory_size(0) * 65536u; }

/* Makes memory reach `end`; false past MEMORY_LIMIT or when it cannot grow. */
static int reach(u32 end) {
  if (end > MEMORY_LIMIT) return 0;
  u32 have = memory_top();
  if (end <= have) return 1;
  u32 pages = (end - have + 65535) / 65536;
  return __builtin_wasm_memory_grow(0, pages) != (unsigned long)-1;
}

static void *alloc(u32 size) {
  size = (size + 7) & ~7u;
  if (arena + size > arena_end) {
    u32 want = (u32)arena + size + (1u << 16);
    if (!reach(want)) {
      failed = SHIFT_NO_MEMORY;
      return 0;
    }
    arena_end = (u8 *)memory_top();
  }
  void *p = arena;
  arena += size;
  return p;
}

static u8 *copy_text(const u8 *p, i32 len) {
  u8 *c = alloc(len > 0 ? len : 1);
  if (!c) return 0;
  for (i32 i = 0; i < len; i++) c[i] = p[i];
  return c;
}

static inline i32 kind(i32 r) { return tp[r * REC]; }
static inline i32 next(i32 r) { return tp[r * REC + 3]; }
static inline i32 count(i32 r) { return tp[r * REC + 2]; }

static int same(const u8 *a, i32 alen, const u8 *b, i32 blen) {
  if (alen != blen) return 0;
  for (i32 i = 0; i < alen; i++) if (a[i] != b[i]) return 0;
  return 1;
}

/* The array index a key stands for in a JavaScript object (canonical, below 2^32 - 1), or -1. */
static i32 array_index(const u8 *p, i32 len) {
  if (len == 0 || len > 10 || (len > 1 && p[0] == '0')) return -1;
  u64 n = 0;
  for (i32 i = 0; i < len; i++) {
    if (p[i] < '0' || p[i] > '9') return -1;
    n = n * 10 + (p[i] - '0');
  }
  if (n > 0xfffffffeull) return -1;
  /* Indexes past an i32 are left to JavaScript: obj_add declines them. */
  return n <= 0x7fffffff ? (i32)n : -2;
}

/* Java's Integer.parseInt as an array index (javaIndex in shift_codegen.ts): n >= 0, else -1. */
static i32 java_index(const u8 *p, i32 len) {
  i32 i = 0;
  i32 negative = 0;
  if (len == 0) return -1;
  if (p[0] == '+' || p[0] == '-') {
    if (len == 1) return -1;
    negative = p[0] == '-';
    i = 1;
  }
  u64 n = 0;
  for (; i < len; i++) {
    if (p[i] < '0' || p[i] > '9') return -1;
    n = n * 10 + (p[i] - '0');
    if (n > 0x80000000ull) return -1;
  }
  if (negative) return n == 0 ? 0 : -1;
  return n <= 0x7fffffff ? (i32)n : -1;
}

static i32 hash_of(const u8 *p, i32 len);

/* Works out a key's hash and array index, once per key set. */
static inline void derive(Key *k) {
  if (k->derived) return;
  k->hash = hash_of(k->p, k->len);
  k->aindex = array_index(k->p, k->len);
  k->derived = 1;
}

static void set_index_key(Key *k, i32 i) {
  i32 len = 0;
  u8 tmp[12];
  do {
    tmp[len++] = (u8)('0' + i % 10);
    i /= 10;
  } while (i > 0);
  for (i32 j = 0; j < len; j++) k->digits[j] = tmp[len - 1 - j];
  k->p = k->digits;
  k->len = len;
  k->stable = 0;
  k->derived = 0;
}

/* The text of input key record k (a key without escapes; others decline). */
static int input_key(i32 k, const u8 **p, i32 *len) {
  if (tp[k * REC] != K_STRING) {
    failed = SHIFT_DECLINED;
    return 0;
  }
  *p = in + tp[k * REC + 1];
  *len = tp[k * REC + 2] - tp[k * REC + 1];
  return 1;
}

/* ---- the output tree ---- */

static Node *new_node(i32 type) {
  Node *n = alloc(sizeof(Node));
  if (!n) return 0;
  n->type = type;
  n->first = n->last = 0;
  n->seen = 0;
  n->members = 0;
  n->items = 0;
  n->n = 0;
  n->cap = type == N_OBJ ? -1 : 0;
  return n;
}

/* The value a tape record stands for (RawDoc.leaf): null, or the record itself (tagged). */
static Node *leaf_node(i32 r) {
  if (r < 0 || kind(r) == K_NULL) return &null_node;
  return (Node *)(((u32)r << 1) | 1);
}

static Node *str_node(const u8 *p, i32 len) {
  Node *n = new_node(N_STR);
  if (!n) return 0;
  n->p = copy_text(p, len);
  n->len = len;
  return n;
}

static i32 hash_of(const u8 *p, i32 len);
static i32 hash_of(const u8 *p, i32 len) {
  u32 h = 0x811c9dc5u;
  for (i32 i = 0; i < len; i++) h = (h ^ p[i]) * 0x01000193u;
  return (i32)h;
}

typedef struct {
  const u8 *p;
  i32 len;
  i32 hash;
  i32 index;  /* array steps: the index; map steps: the key as an array index, or -1 */
  i32 stable; /* the text stays where it is for the whole run */
} PathKey;

static Member *find(Node *obj, const u8 *key, i32 klen, i32 hash) {
  if (!(obj->seen & (1ull << (hash & 63)))) return 0;
  for (Member *m = obj->first; m; m = m->next) {
    if (m->hash == hash && same(m->key, m->klen, key, klen)) return m;
  }
  return 0;
}

/* Appends member `key`, which obj does not have yet. */
static void obj_add(Node *obj, const PathKey *key, Node *v) {
  i32 index = key->index;
  if (index == -2) {
    failed = SHIFT_DECLINED;
    return;
  }
  if (++obj->members > MAX_MEMBERS) {
    failed = SHIFT_DECLINED;
    return;
  }
  Member *m = alloc(sizeof(Member));
  if (!m) return;
  m->key = key->stable ? key->p : copy_text(key->p, key->len);
  i32 klen = key->len, hash = key->hash;
  m->klen = klen;
  m->hash = hash;
  obj->seen |= 1ull << (hash & 63);
  m->index = index;
  if (index >= 0) {
    obj->cap = obj->cap != -2 && index > obj->cap ? index : -2;
    obj->n++;
  }
  m->value = v;
  m->next = 0;
  if (obj->last) obj->last->next = m;
  else obj->first = m;
  obj->last = m;
}

/* Sets member `key` of obj (appended when new). */
static void obj_put(Node *obj, const PathKey *key, Node *v) {
  Member *m = find(obj, key->p, key->len, key->hash);
  if (m) m->value = v;
  else obj_add(obj, key, v);
}

static void arr_push(Node *arr, Node *v) {
  if (arr->n == arr->cap) {
    i32 cap = arr->cap ? arr->cap * 2 : 8;
    Node **items = alloc(cap * sizeof(Node *));
    if (!items) return;
    for (i32 i = 0; i < arr->n; i++) items[i] = arr->items[i];
    arr->items = items;
    arr->cap = cap;
  }
  arr->items[arr->n++] = v;
}

/* putIndex: pads with nulls up to the index (past MAX_SHIFT_INDEX, JavaScript reports the error). */
static void arr_put(Node *arr, i32 index, Node *v) {
  if (index > MAX_SHIFT_INDEX) {
    failed = SHIFT_DECLINED;
    return;
  }
  if (index > arr->n) {
    padding_left -= index - arr->n;
    if (padding_left < 0) {
      failed = SHIFT_DECLINED;
      return;
    }
  }
  while (arr->n < index && !failed) arr_push(arr, &null_node);
  if (failed) return;
  if (index < arr->n) arr->items[index] = v;
  else arr_push(arr, v);
}

/* An input container about to be written into: a node of ours (RawDoc.refValue, one level). */
static Node *materialize(i32 r) {
  i32 k = kind(r);
  if (k == K_ARRAY) {
    Node *a = new_node(N_ARR);
    if (!a) return 0;
    i32 e = r + 1;
    for (i32 n = count(r); n > 0 && !failed; n--) {
      arr_push(a, leaf_node(e));
      e = next(e);
    }
    return a;
  }
  Node *o = new_node(N_OBJ);
  if (!o) return 0;
  i32 m = r + 1;
  for (i32 n = count(r); n > 0 && !failed; n--) {
    const u8 *key;
    i32 klen;
    if (!input_key(m, &key, &klen)) return 0;
    PathKey pk = {key, klen, tp[m * REC + 3], -1, 1}; /* input keys are never array indexes */
    obj_put(o, &pk, leaf_node(m + 1));
    m = next(m + 1);
  }
  return o;
}

static inline int is_container_ref(Node *v) {
  return is_ref(v) && kind(ref_of(v)) >= K_ARRAY;
}

/* ---- the walk ---- */

static void composite(i32 node, i32 r, i32 d);


/* The key part `up` levels above `level`: the whole key (group 0) or the `*` capture. */
static void ref_text(i32 level, i32 up, i32 group, const u8 **p, i32 *len) {
  Key *k = &K[level - up];
  if (group == 0) {
    *p = k->p;
    *len = k->len;
  } else {
    *p = k->gp;
    *len = k->glen;
  }
}

static i32 lookup(i32 l, i32 level);

/*
 * The key text of the scalar at tape record r (tapeKey in path_elements.ts): false for nothing,
 * null or a container, and a decline for numbers (Java spells those) and escaped strings.
 */
static int tape_key(i32 r, const u8 **p, i32 *len) {
  if (r < 0) return 0;
  switch (kind(r)) {
    case K_STRING:
      *p = in + tp[r * REC + 1];
      *len = tp[r * REC + 2] - tp[r * REC + 1];
      return 1;
    case K_TRUE:
      *p = (const u8 *)"true";
      *len = 4;
      return 1;
    case K_FALSE:
      *p = (const u8 *)"false";
      *len = 5;
      return 1;
    case K_INT:
    case K_NUMBER:
    case K_ESCAPED:
      failed = SHIFT_DECLINED;
      return 0;
  }
  return 0;
}

/*
 * Works out the key of output path element e seen from `level` (key_of does the constant ones);
 * false when it does not resolve.
 */
static int computed_key(const i32 *e, i32 level, PathKey *pk) {
  switch (e[1]) {
    case E_KEY_LOOKUP:
      if (!tape_key(lookup(e[2], level), &pk->p, &pk->len)) return 0;
      pk->hash = hash_of(pk->p, pk->len);
      pk->index = array_index(pk->p, pk->len);
      pk->stable = 1;
      return 1;
    case E_INDEX_LOOKUP: {
      const u8 *p;
      i32 len;
      if (!tape_key(lookup(e[2], level), &p, &len)) return 0;
      pk->index = java_index(p, len);
      return pk->index >= 0;
    }
    case E_INDEX:
      pk->index = e[2];
      return 1;
    case E_INDEX_COUNT:
      pk->index = *HC[level - e[2]];
      return 1;
    case E_APPEND:
      return 1;
    case E_INDEX_REF: {
      Key *k = &K[level - e[2]];
      i32 index;
      if (e[3] == 0) index = k->index != -2 ? k->index : java_index(k->p, k->len);
      else index = java_index(k->gp, k->glen);
      pk->index = index;
      return index >= 0;
    }
  }
  /* E_AMP */
  const i32 *t = prog + e[2];
  i32 tokens = e[3];
  if (tokens == 1 && t[0] == KEY_REF) {
    Key *k = &K[level - t[1]];
    if (t[2] == 0) {
      derive(k);
      pk->p = k->p;
      pk->len = k->len;
      pk->hash = k->hash;
      pk->index = k->aindex;
    } else {
      pk->p = k->gp;
      pk->len = k->glen;
      pk->hash = hash_of(pk->p, pk->len);
      pk->index = array_index(pk->p, pk->len);
    }
    pk->stable = k->stable;
    return 1;
  }
  i32 total = 0;
  for (i32 j = 0; j < tokens; j++) {
    const u8 *p;
    i32 len;
    if (t[j * 3] == KEY_CONST) len = t[j * 3 + 2];
    else ref_text(level, t[j * 3 + 1], t[j * 3 + 2], &p, &len);
    total += len;
  }
  u8 *buf = alloc(total > 0 ? total : 1);
  if (!buf) return 0;
  i32 at = 0;
  for (i32 j = 0; j < tokens; j++) {
    const u8 *p;
    i32 len;
    if (t[j * 3] == KEY_CONST) {
      p = strs + t[j * 3 + 1];
      len = t[j * 3 + 2];
    } else {
      ref_text(level, t[j * 3 + 1], t[j * 3 + 2], &p, &len);
    }
    for (i32 c = 0; c < len; c++) buf[at++] = p[c];
  }
  pk->p = buf;
  pk->len = total;
  pk->hash = hash_of(buf, total);
  pk->index = array_index(buf, total);
  pk->stable = 1;
  return 1;
}

/* The key of output path element e seen from `level`; false when it does not resolve. */
static inline int key_of(const i32 *e, i32 level, PathKey *pk) {
  if (e[1] == E_KEY) {
    pk->p = strs + e[2];
    pk->len = e[3];
    pk->hash = e[4];
    pk->index = e[5];
    pk->stable = 1;
    return 1;
  }
  return computed_key(e, level, pk);
}

/* Writes `data` at the output path of writer record w, seen from `level` (ShiftWriter.write). */
static void write_path(i32 w, i32 level, Node *data) {
  i32 n = prog[w];
  const i32 *el = prog + w + 1;
  PathKey keys[MAX_LEVELS];
  if (n > MAX_LEVELS) {
    failed = SHIFT_DECLINED;
    return;
  }
  i32 slot = el[n * ELEM];
  Node *tree = &holder;
  /*
   * Keys first: if one does not resolve, nothing is written. With a kept container only the
   * `[&n]` indexes before the last element are needed to find it, and then the last key.
   */
  i32 indexes[CACHE_INDEXES];
  i32 dynamic = 0;
  if (slot >= 0) {
    dynamic = el[n * ELEM + 1];
    const i32 *positions = el + n * ELEM + 2;
    for (i32 j = 0; j < dynamic; j++) {
      i32 i = positions[j];
      if (!computed_key(el + i * ELEM, level, &keys[i])) return;
      indexes[j] = keys[i].index;
    }
    if (cache_epoch[slot] == epoch) {
      i32 j = 0;
      while (j < dynamic && cache_index[slot][j] == indexes[j]) j++;
      if (j == dynamic) {
        if (!key_of(el + (n - 1) * ELEM, level, &keys[n - 1])) return;
        tree = cache_node[slot];
        goto found;
      }
    }
  }
  for (i32 i = 0; i < n; i++) {
    if (!key_of(el + i * ELEM, level, &keys[i])) return;
  }
  for (i32 i = 0; i < n - 1; i++) {
    i32 step = el[i * ELEM];
    PathKey *pk = &keys[i];
    Node *sub = 0;
    Member *m = 0;
    if (step == 0) {
      m = find(tree, pk->p, pk->len, pk->hash);
      if (m) sub = m->value;
    } else if (step == 1) {
      if (pk->index < tree->n) sub = tree->items[pk->index];
    }
    int want_map = el[(i + 1) * ELEM] == 0;
    if (is_container_ref(sub)) {
      sub = materialize(ref_of(sub));
      if (failed) return;
      if (m) m->value = sub;
      else arr_put(tree, pk->index, sub);
    }
    if (sub == 0 || type_of(sub) == N_NULL) {
      sub = new_node(want_map ? N_OBJ : N_ARR);
      if (!sub) return;
      if (m) m->value = sub;
      else if (step == 0) obj_add(tree, pk, sub);
      else if (step == 2) arr_push(tree, sub);
      else arr_put(tree, pk->index, sub);
      if (failed) return;
    } else if (type_of(sub) != (want_map ? N_OBJ : N_ARR)) {
      return; /* a clash with what is already there: JOLT drops the write */
    }
    tree = sub;
  }
  if (slot >= 0) {
    cache_epoch[slot] = epoch;
    cache_node[slot] = tree;
    for (i32 j = 0; j < dynamic; j++) cache_index[slot][j] = indexes[j];
  }
found:;
  i32 step = el[(n - 1) * ELEM];
  PathKey *pk = &keys[n - 1];
  if (step == 2) {
    arr_push(tree, data);
    return;
  }
  Member *m = 0;
  Node *existing = 0;
  if (step == 0) {
    m = find(tree, pk->p, pk->len, pk->hash);
    if (m) existing = m->value;
  } else if (pk->index < tree->n) {
    existing = tree->items[pk->index];
  }
  if (is_container_ref(existing)) {
    existing = materialize(ref_of(existing));
    if (failed) return;
    if (m) m->value = existing;
    else arr_put(tree, pk->index, existing);
  }
  Node *value;
  if (existing == 0 || type_of(existing) == N_NULL) {
    value = data;
  } else if (type_of(existing) == N_ARR) {
    arr_push(existing, data);
    return;
  } else {
    value = new_node(N_ARR);
    if (!value) return;
    arr_push(value, existing);
    arr_push(value, data);
    epoch++; /* a container that becomes an array element is no longer where it was found */
  }
  if (failed) return;
  if (m) m->value = value;
  else if (step == 0) obj_add(tree, pk, value);
  else arr_put(tree, pk->index, value);
}

static void write_all(const i32 *writers, i32 n, i32 level, Node *data) {
  for (i32 i = 0; i < n && !failed; i++) write_path(writers[i], level, data);
}

/* A member of object r by key text (RawDoc.memberFrom: from `from` on, then from the start). */
static i32 member(i32 r, i32 from, const u8 *key, i32 klen, i32 hash) {
  i32 end = next(r);
  for (i32 k = from; k < end; k = next(k + 1)) {
    if (tp[k * REC + 3] == hash &&
        same(in + tp[k * REC + 1], tp[k * REC + 2] - tp[k * REC + 1], key, klen)) {
      return k + 1;
    }
  }
  for (i32 k = r + 1; k < from; k = next(k + 1)) {
    if (tp[k * REC + 3] == hash &&
        same(in + tp[k * REC + 1], tp[k * REC + 2] - tp[k * REC + 1], key, klen)) {
      return k + 1;
    }
  }
  return -1;
}

static i32 element(i32 r, i32 i) {
  i32 e = r + 1;
  while (i-- > 0) e = next(e);
  return e;
}

/*
 * A transpose's lookup from `level` (#lookup and #reader): a record, -1 for null, -2 for none.
 * Keys computed from the walked path are worked out first; an index among them that does not
 * resolve makes the lookup find nothing.
 */
static i32 lookup(i32 l, i32 level) {
  i32 cur = R[level - prog[l]];
  i32 steps = prog[l + 1];
  if (steps < 0) return cur;
  PathKey keys[MAX_LOOKUP_STEPS];
  for (i32 i = 0; i < steps; i++) {
    const i32 *s = prog + l + 2 + i * 4;
    if (s[0] != 2) continue;
    const i32 *e = prog + s[1];
    if (!computed_key(e, level, &keys[i])) return -2;
  }
  for (i32 i = 0; i < steps; i++) {
    const i32 *s = prog + l + 2 + i * 4;
    int last = i == steps - 1;
    int map_step = s[0] == 0 || (s[0] == 2 && prog[s[1]] == 0);
    if (cur < 0) return -2;
    if (map_step) {
      if (kind(cur) != K_OBJECT) return -2;
      i32 m = s[0] == 0 ? member(cur, cur + 1, strs + s[1], s[2], s[3])
                        : member(cur, cur + 1, keys[i].p, keys[i].len, keys[i].hash);
      if (last) return m >= 0 ? m : -2;
      cur = m >= 0 ? m : -1;
    } else {
      i32 index = s[0] == 1 ? s[1] : keys[i].index;
      if (kind(cur) != K_ARRAY) return -2;
      if (index >= count(cur)) return last ? -2 : -1;
      cur = element(cur, index);
    }
  }
  return cur;
}

/* The data of a leaf whose input is r: the key (SRC_KEY) or the value. */
static Node *leaf_data(i32 source, i32 level, i32 r) {
  if (source == SRC_KEY) return str_node(K[level].p, K[level].len);
  return leaf_node(r);
}

/* Applies matched child `child` at `level` (#apply): K[level] was set by the caller. */
static void apply_child(i32 child, i32 r, i32 level) {
  new_count(level);
  if (prog[child] == T_COMPOSITE) {
    composite(child, r, level);
    (*HC[level - 1])++;
    return;
  }
  /* A leaf (of the input: it counts). */
  R[level] = r < 0 ? -1 : r;
  i32 n = prog[child + 2];
  if (n > 0) {
    Node *data = leaf_data(prog[child + 1], level, r);
    if (data) write_all(prog + child + 3, n, level, data);
  }
  (*HC[level - 1])++;
}

static void special(i32 s, i32 r, i32 d) {
  i32 level = d + 1;
  HC[level] = HC[d]; /* `@`, `@(…)`: matched as the parent (`$`, `#` below: a key of their own) */
  switch (prog[s]) {
    case T_TRANSPOSE_LEAF: {
      i32 found = lookup(prog[s + 1], d);
      if (found == -2) return;
      K[level] = K[d];
      R[level] = r < 0 ? -1 : r;
      Node *data = leaf_node(found);
      if (data) write_all(prog + s + 3, prog[s + 2], level, data);
      return;
    }
    case T_TRANSPOSE_COMPOSITE: {
      i32 found = lookup(prog[s + 1], d);
      if (found == -2) return;
      K[level] = K[d];
      composite(prog[s + 2], found, level);
      (*HC[d])++;
      return;
    }
    case T_AT_LEAF: {
      K[level] = K[d];
      R[level] = r < 0 ? -1 : r;
      Node *data = leaf_data(prog[s + 1], level, r);
      if (data) write_all(prog + s + 3, prog[s + 2], level, data);
      return;
    }
    case T_KEYED_LEAF: {
      Key *k = &K[level];
      new_count(level);
      if (prog[s + 1] == KEY_CONST) {
        k->p = strs + prog[s + 2];
        k->len = prog[s + 3];
        k->stable = 1;
        k->derived = 0;
      } else {
        ref_text(d, prog[s + 2], prog[s + 3], &k->p, &k->len);
        k->stable = K[d - prog[s + 2]].stable;
        k->derived = 0;
      }
      k->index = -2;
      k->gp = 0;
      k->glen = 0;
      R[level] = r < 0 ? -1 : r;
      Node *data = leaf_data(prog[s + 4], level, r);
      if (data) write_all(prog + s + 6, prog[s + 5], level, data);
      return;
    }
  }
}

/* Sets K[level] to a key that a computed child matched, with its capture, then applies it. */
static void computed(const i32 *c, i32 nc, const u8 *key, i32 klen, i32 index, i32 r, i32 level,
                     const Key *text_of) {
  for (i32 i = 0; i < nc; i++) {
    const i32 *e = c + i * 6;
    Key *k = &K[level];
    if (e[0] == 0) {
      /* `*`: matches everything, and nothing after it can. */
      *k = *text_of;
      k->gp = 0;
      k->glen = 0;
      k->index = index;
      apply_child(e[5], r, level);
      return;
    }
    i32 plen = e[2], slen = e[4];
    const u8 *pre = strs + e[1], *suf = strs + e[3];
    if (klen <= plen + slen) continue;
    if (!same(key, plen, pre, plen) || !same(key + klen - slen, slen, suf, slen)) continue;
    *k = *text_of;
    k->gp = key + plen;
    k->glen = klen - plen - slen;
    k->index = index;
    apply_child(e[5], r, level);
    return;
  }
}

/* Applies the literal child `l` (6 ints) whose key matched, with input r (-2: none). */
static void literal(const i32 *l, i32 r, i32 level, i32 index) {
  Key *k = &K[level];
  k->p = strs + l[0];
  k->len = l[1];
  k->gp = 0;
  k->glen = 0;
  k->index = index;
  k->stable = 1;
  k->derived = 1;
  k->hash = l[2];
  k->aindex = l[4] >= 0 ? l[4] : -1;
  apply_child(l[5], r, level);
}

/* One key of a conflict or computed node: its literal child if there is one, else computed. */
static void by_key(const i32 *lits, i32 nl, const i32 *comp, i32 nc, i32 conflict,
                   const Key *key, i32 r, i32 index, i32 level) {
  if (conflict) {
    for (i32 i = 0; i < nl; i++) {
      const i32 *l = lits + i * 6;
      if (same(strs + l[0], l[1], key->p, key->len)) {
        Key *k = &K[level];
        *k = *key;
        k->p = strs + l[0]; /* the literal's own text (the key may live in a buffer) */
        k->stable = 1;
        k->derived = 1;
        k->hash = l[2];
        k->aindex = l[4] >= 0 ? l[4] : -1;
        k->gp = 0;
        k->glen = 0;
        k->index = index;
        apply_child(l[5], r, level);
        return;
      }
    }
  }
  computed(comp, nc, key->p, key->len, index, r, level, key);
}

static void composite(i32 node, i32 r, i32 d) {
  if (failed) return;
  if (d + 1 >= MAX_LEVELS) {
    failed = SHIFT_DECLINED;
    return;
  }
  R[d] = r == -2 ? -1 : r;
  i32 st = prog[node + 1];
  i32 ns = prog[node + 2], nl = prog[node + 3], nc = prog[node + 4];
  const i32 *sp = prog + node + 5;
  const i32 *lits = sp + ns;
  const i32 *comp = lits + nl * 6;
  for (i32 i = 0; i < ns && !failed; i++) special(sp[i], r, d);
  if (r < 0 || failed) return;
  i32 k = kind(r);
  i32 level = d + 1;
  i32 with_computed = st != S_AVAILABLE;
  i32 conflict = st == S_CONFLICT;
  Key key;
  if (k == K_OBJECT) {
    if (st == S_AVAILABLE || st == S_AVAILABLE_COMPUTED) {
      i32 from = r + 1;
      for (i32 i = 0; i < nl && !failed; i++) {
        const i32 *l = lits + i * 6;
        i32 v = member(r, from, strs + l[0], l[1], l[2]);
        if (v < 0) continue;
        from = next(v);
        literal(l, v, level, -2);
      }
    }
    if (with_computed) {
      i32 m = r + 1;
      for (i32 n = count(r); n > 0 && !failed; n--) {
        i32 v = m + 1;
        if (!input_key(m, &key.p, &key.len)) return;
        key.index = -2;
        key.stable = 1;
        key.derived = 1;
        key.hash = tp[m * REC + 3];
        key.aindex = -1; /* documents with array-index keys take the parsed path */
        by_key(lits, nl, comp, nc, conflict, &key, v, -2, level);
        m = next(v);
      }
    }
  } else if (k == K_ARRAY) {
    i32 size = count(r);
    if (st == S_AVAILABLE || st == S_AVAILABLE_COMPUTED) {
      for (i32 i = 0; i < nl && !failed; i++) {
        const i32 *l = lits + i * 6;
        if (l[3] < 0 || l[3] >= size) continue;
        literal(l, element(r, l[3]), level, l[4]);
      }
    }
    if (with_computed) {
      i32 e = r + 1;
      for (i32 i = 0; i < size && !failed; i++) {
        set_index_key(&key, i);
        key.index = i;
        by_key(lits, nl, comp, nc, conflict, &key, e, i, level);
        e = next(e);
      }
    }
  } else if (k != K_NULL) {
    /* A scalar, matched as if it were a key with nothing under it. */
    if (k == K_STRING) {
      key.p = in + tp[r * REC + 1];
      key.len = tp[r * REC + 2] - tp[r * REC + 1];
    } else if (k == K_TRUE || k == K_FALSE) {
      key.p = (const u8 *)(k == K_TRUE ? "true" : "false");
      key.len = k == K_TRUE ? 4 : 5;
    } else {
      failed = SHIFT_DECLINED;
      return;
    }
    key.index = -2;
    key.stable = 1;
    key.derived = 0;
    if (conflict) {
      by_key(lits, nl, comp, nc, 1, &key, -2, -2, level);
      return;
    }
    for (i32 i = 0; i < nl; i++) {
      const i32 *l = lits + i * 6;
      if (same(strs + l[0], l[1], key.p, key.len)) {
        literal(l, -2, level, -2);
        break;
      }
    }
    if (with_computed && !failed) computed(comp, nc, key.p, key.len, -2, -2, level, &key);
  }
}

/* ---- the writer ---- */

static __attribute__((noinline)) int grow_output(u32 n) {
  u32 used = (u32)(out - out_start);
  u32 want = (u32)out_start + (used + n) * 2 + 65536;
  if (!reach(want)) {
    failed = SHIFT_NO_MEMORY;
    return 0;
  }
  out_end = (u8 *)memory_top();
  return 1;
}

/* Room for n more output bytes (false when memory ran out: `failed` says so). */
static inline int room(u32 n) { return out + n <= out_end || grow_output(n); }

static void put_bytes(const u8 *p, i32 n) {
  if (!room(n)) return;
  if (n >= 16) {
    __builtin_memcpy(out, p, n);
  } else {
    for (i32 i = 0; i < n; i++) out[i] = p[i];
  }
  out += n;
}

static void put_byte(u8 b) {
  if (!room(1)) return;
  *out++ = b;
}

static void put_text(const char *s) {
  while (*s) put_byte((u8)*s++);
}

/* Tape record r as JSON (RawDoc.write). */
static void write_ref(i32 r) {
  const i32 *t = tp + r * REC;
  switch (t[0]) {
    case K_NULL:
      return put_text("null");
    case K_FALSE:
      return put_text("false");
    case K_TRUE:
      return put_text("true");
    case K_INT:
      return put_bytes(in + t[1], t[2] - t[1]);
    case K_STRING:
      return put_bytes(in + t[1] - 1, t[2] - t[1] + 2);
    case K_ARRAY: {
      if (ends[r] >= 0) return put_bytes(in + t[1], ends[r] - t[1]);
      put_byte('[');
      i32 e = r + 1;
      for (i32 n = t[2], i = 0; i < n && !failed; i++) {
        if (i > 0) put_byte(',');
        write_ref(e);
        e = next(e);
      }
      return put_byte(']');
    }
    case K_OBJECT: {
      if (ends[r] >= 0) return put_bytes(in + t[1], ends[r] - t[1]);
      put_byte('{');
      i32 k = r + 1;
      for (i32 n = t[2], i = 0; i < n && !failed; i++) {
        if (i > 0) put_byte(',');
        /* A key without escapes (the scan leaves the others to JavaScript): its bytes. */
        put_bytes(in + tp[k * REC + 1] - 1, tp[k * REC + 2] - tp[k * REC + 1] + 2);
        put_byte(':');
        write_ref(k + 1);
        k = next(k + 1);
      }
      return put_byte('}');
    }
    default: /* numbers JavaScript respells, strings with escapes */
      failed = SHIFT_DECLINED;
  }
}

static void write_node(Node *v);

static void write_member(Member *m, int *first) {
  i32 n = m->klen;
  if (!room(n + 4)) return;
  u8 *o = out;
  if (!*first) *o++ = ',';
  *first = 0;
  *o++ = '"';
  for (i32 i = 0; i < n; i++) o[i] = m->key[i];
  o += n;
  *o++ = '"';
  *o++ = ':';
  out = o;
  write_node(m->value);
}

static void write_object(Node *o) {
  put_byte('{');
  int first = 1;
  /* Array-index keys first, ascending (as JavaScript orders an object's own keys). */
  if (o->n > 0 && o->cap != -2) {
    for (Member *m = o->first; m && !failed; m = m->next) {
      if (m->index >= 0) write_member(m, &first);
    }
  }
  i32 last = -1;
  for (i32 left = o->cap == -2 ? o->n : 0; left > 0 && !failed; left--) {
    Member *low = 0;
    for (Member *m = o->first; m; m = m->next) {
      if (m->index > last && (!low || m->index < low->index)) low = m;
    }
    if (!low) break;
    write_member(low, &first);
    last = low->index;
  }
  for (Member *m = o->first; m && !failed; m = m->next) {
    if (m->index < 0) write_member(m, &first);
  }
  put_byte('}');
}

static void write_node(Node *v) {
  if (failed) return;
  if (is_ref(v)) return write_ref(ref_of(v));
  switch (v->type) {
    case N_NULL:
      return put_text("null");
    case N_STR:
      put_byte('"');
      put_bytes(v->p, v->len);
      return put_byte('"');
    case N_OBJ:
      return write_object(v);
    case N_ARR:
      put_byte('[');
      for (i32 i = 0; i < v->n && !failed; i++) {
        if (i > 0) put_byte(',');
        write_node(v->items[i]);
      }
      return put_byte(']');
  }
}

/*
 * Runs the program at `program` (its strings at `strings`) over the document scanned into
 * `input` / `tape_at` / `ends_at`, using memory from `scratch` on. Returns the output's length
 * (its bytes at output_at()), SHIFT_DECLINED or SHIFT_NO_MEMORY.
 */
EXPORT("shift_run")
i32 shift_run(u32 input, u32 tape_at, u32 ends_at, u32 program, u32 strings, u32 scratch) {
  in = (const u8 *)input;
  tp = (const i32 *)tape_at;
  ends = (const i32 *)ends_at;
  prog = (const i32 *)program;
  strs = (const u8 *)strings;
  arena = (u8 *)((scratch + 7) & ~7u);
  arena_end = (u8 *)memory_top();
  failed = 0;
  padding_left = MAX_SHIFT_INDEX;
  epoch++;
  holder.type = N_OBJ;
  holder.first = holder.last = 0;
  holder.members = 0;
  holder.n = 0;
  holder.cap = -1;
  holder.seen = 0;
  K[0].p = K[1].p = (const u8 *)"root";
  K[0].len = K[1].len = 4;
  K[0].index = K[1].index = -2;
  K[0].gp = K[1].gp = 0;
  K[0].glen = K[1].glen = 0;
  K[0].stable = K[1].stable = 1;
  K[0].derived = K[1].derived = 0;
  R[0] = 0;
  new_count(0);
  new_count(1);
  composite(prog[0], 0, 1);
  if (failed) return failed;
  out_start = out = arena;
  out_end = arena_end;
  Member *root = holder.first; /* every path starts with "root" */
  if (root) write_node(root->value);
  else put_text("null");
  if (failed) return failed;
  return (i32)(out - out_start);
}

EXPORT("output_at") u32 output_at(void) { return (u32)out_start; }

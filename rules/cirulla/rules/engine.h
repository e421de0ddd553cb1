/*
 * The compiled rules core's state machine, shared by every extension built on it.
 *
 * The pure-Python modules of cirulla.rules are the readable reference; this header
 * re-implements their hot path (captures, declarations, legal actions in the protocol's
 * order, applying an action, dealing, deal scoring, sampling a world from a seat's view).
 * Every function mirrors a Python one named in its comment; tests/rules/test_native.py
 * drives both through the same random games and requires identical actions, events and
 * states.
 *
 * Everything here is static: each extension that includes it (cirulla.rules._native, the
 * rules core's module in _native.c; cirulla.bots._search, the bots' search on their own
 * floor; cirulla.env._native, the environments' stepping) gets its own copy and exports
 * nothing but its module. The Python binding helpers at the end (options, masks, views)
 * are shared the same way.
 *
 * Encodings are the Python ones: a card is rank_index * 4 + suit, a set of cards a 40-bit
 * mask, an action code card | declaration << 6 | capture << 12 (rules/cirulla/rules/actions.py).
 */
#ifndef CIRULLA_RULES_ENGINE_H
#define CIRULLA_RULES_ENGINE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;

#define NUM_CARDS 40
#define ALL_CARDS ((1ULL << NUM_CARDS) - 1)
#define SETTEBELLO 24 /* 7D */
#define WILD 25       /* 7H */
#define ACES 0xFULL
#define MAX_PLAYERS 4

static u64 COINS_MASK, GRANDE_MASK, SUIT_MASK[4];
static int PRIMIERA_POINTS[NUM_CARDS];
static uint8_t PRIM7[128]; /* bit r set for each rank r (ace to 7) held: the best points */

static inline int card_value(int c) { return (c >> 2) + 1; }
static inline int popc(u64 m) {
#if defined(__x86_64__) && !defined(__POPCNT__)
    /* x86-64's baseline has no popcnt instruction: the builtin would call libgcc */
    m -= (m >> 1) & 0x5555555555555555ULL;
    m = (m & 0x3333333333333333ULL) + (m >> 2 & 0x3333333333333333ULL);
    m = (m + (m >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    return (int)((m * 0x0101010101010101ULL) >> 56);
#else
    return __builtin_popcountll(m);
#endif
}

static int cards_of(u64 m, int *out) {
    int n = 0;
    while (m) {
        out[n++] = __builtin_ctzll(m);
        m &= m - 1;
    }
    return n;
}

static void init_tables(void) {
    static const int prim[10] = {16, 12, 13, 14, 15, 18, 21, 10, 10, 10};
    for (int c = 0; c < NUM_CARDS; c++) {
        PRIMIERA_POINTS[c] = prim[c >> 2];
        SUIT_MASK[c & 3] |= 1ULL << c;
    }
    COINS_MASK = SUIT_MASK[0];
    GRANDE_MASK = (1ULL << 28) | (1ULL << 32) | (1ULL << 36);
    for (int k = 0; k < 128; k++)
        for (int r = 0; r < 7; r++)
            if (k >> r & 1 && prim[r] > PRIM7[k]) PRIM7[k] = (uint8_t)prim[r];
}

/* ------------------------------------------------------------------ random numbers */

typedef struct {
    u64 s;
} Rng; /* splitmix64: tiny state (one per sampled world), good statistical quality */

static inline u64 rng_next(Rng *r) {
    u64 z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static inline uint32_t rng_below(Rng *r, uint32_t n) {
    return (uint32_t)(((rng_next(r) >> 32) * (u64)n) >> 32);
}
static inline double rng_unit(Rng *r) { return (double)(rng_next(r) >> 11) * 0x1.0p-53; }

static void shuffle(uint8_t *a, int n, Rng *r) {
    Rng local = *r; /* in a register: the array's stores might alias *r */
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(&local, (uint32_t)(i + 1));
        uint8_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
    *r = local;
}

/* ------------------------------------------------------------------ options */

typedef struct {
    int players, target, must_capture, pairing_precedence, ace_sweep_scopa;
    int dealer_low_bonus, primiera_needs_all_suits, piccola_max, cappotto;
} Opts; /* the fields of rules/cirulla/rules/options.py:Options, in declaration order */

/* ------------------------------------------------------------------ growable scratch */

typedef struct {
    u64 *sub_mask;
    uint8_t *sub_sum, *sub_size;
    int nsub, sub_cap;
    u64 *caps;
    int ncaps, caps_cap;
    u64 *codes;
    int ncodes, codes_cap;
    /* small tables (DP_MAX cards or fewer): every subset's value sum and card mask, by
       position mask; ascending position masks are ascending card masks, so captures come
       out already in the protocol's order */
    uint8_t dp_sum[1 << 8];
    u64 dp_mask[1 << 8];
} Scratch;
#define DP_MAX 8

static int grow(void **buf, int *cap, int need, size_t elem) {
    if (need <= *cap) return 0;
    int cap2 = *cap ? *cap : 64;
    while (cap2 < need) cap2 *= 2;
    void *p = realloc(*buf, (size_t)cap2 * elem);
    if (!p) return -1;
    *buf = p;
    *cap = cap2;
    return 0;
}

static int grow_subs(Scratch *s, int need) {
    if (need <= s->sub_cap) return 0;
    int cap = s->sub_cap, cap2 = s->sub_cap, cap3 = s->sub_cap;
    if (grow((void **)&s->sub_mask, &cap, need, sizeof(u64)) ||
        grow((void **)&s->sub_sum, &cap2, need, 1) || grow((void **)&s->sub_size, &cap3, need, 1))
        return -1;
    s->sub_cap = cap;
    return 0;
}

static inline int push_code(Scratch *s, u64 code) {
    if (s->ncodes >= s->codes_cap &&
        grow((void **)&s->codes, &s->codes_cap, s->ncodes + 1, sizeof(u64)))
        return -1;
    s->codes[s->ncodes++] = code;
    return 0;
}

static void scratch_free(Scratch *s) {
    free(s->sub_mask);
    free(s->sub_sum);
    free(s->sub_size);
    free(s->caps);
    free(s->codes);
    memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------------ captures (captures.py) */

#define TINY_MAX 4

typedef struct {
    u64 table;
    int ncards, ace_on_table, err, dp, tiny;
    unsigned have; /* bit v: the captures of played value v are in the scratch (tab_caps) */
    int vals[NUM_CARDS]; /* tables larger than tiny: each card's value, ascending cards */
    /* tiny tables (TINY_MAX cards or fewer: nearly every table of a game that must
       capture). The cards in ascending order are positions 0 to 3 (pos[i]: the card's
       bit), a subset is a position mask m (0 to 15), and bit m of subsets[s] is set when
       its values sum to s (s <= 14; [15] gathers the larger sums, never read). A played
       value's captures are two of these words (tiny_bits), their bits in ascending
       position masks, which are ascending card masks: the protocol's order. */
    uint16_t subsets[16];
    u64 pos[TINY_MAX];
    int start[11], len[11];
} Tab;
#define TINY_MAX 4

#define SINGLES 0x116 /* position masks 1, 2, 4 and 8: the single cards */

static int enum_subsets(Scratch *s, const int *cards, const int *vals, int n, int start,
                        int total, u64 mask, int size) {
    for (int j = start; j < n; j++) {
        int t = total + vals[j];
        if (t > 14) continue; /* sums above 14 never capture (15 - value >= 5) */
        u64 m = mask | 1ULL << cards[j];
        if (s->nsub >= s->sub_cap && grow_subs(s, s->nsub + 1)) return -1;
        s->sub_mask[s->nsub] = m;
        s->sub_sum[s->nsub] = (uint8_t)t;
        s->sub_size[s->nsub] = (uint8_t)(size + 1);
        s->nsub++;
        if (enum_subsets(s, cards, vals, n, j + 1, t, m, size + 1)) return -1;
    }
    return 0;
}

/* tab_init of a table larger than tiny: the subsets by position mask (DP_MAX cards or
   fewer), or the subsets summing to at most 14 */
__attribute__((noinline)) static int tab_init_large(Scratch *s, Tab *t, u64 table, int wild) {
    int cards[NUM_CARDS], *vals = t->vals, n = 0;
    for (u64 m = table; m; m &= m - 1) {
        int c = __builtin_ctzll(m);
        cards[n] = c;
        vals[n++] = c == WILD && wild ? wild : card_value(c);
    }
    t->ncards = n;
    t->tiny = 0;
    t->dp = n <= DP_MAX;
    if (t->dp) {
        s->dp_sum[0] = 0;
        s->dp_mask[0] = 0;
        for (int k = 1; k < 1 << n; k++) {
            int low = __builtin_ctz((unsigned)k), prev = k & (k - 1);
            s->dp_sum[k] = (uint8_t)(s->dp_sum[prev] + vals[low]);
            s->dp_mask[k] = s->dp_mask[prev] | 1ULL << cards[low];
        }
    } else if (enum_subsets(s, cards, vals, n, 0, 0, 0, 0)) {
        t->err = -1;
    }
    return t->err;
}

/* The table's subsets summing to at most 14, the 7H at its named value (table_entry). */
static inline __attribute__((always_inline)) int tab_init(Scratch *s, Tab *t, u64 table, int wild) {
    t->table = table;
    t->err = 0;
    t->have = 0;
    t->ace_on_table = (table & ACES) || (wild == 1 && (table >> WILD & 1));
    s->nsub = 0;
    s->ncaps = 0;
    /* a tiny table: the value sums of its subsets, a byte each by position mask (subsets
       0-7 in lo, 8-15 in hi): each card doubles them, those without it (the first 2^i
       bytes) then the same with its value added (the next 2^i) */
    u64 m = table, lo = 0, hi = 0;
    int n = 0;
#define TAB_CARD(i)                                                                       \
    int c##i = __builtin_ctzll(m);                                                        \
    u64 v##i = (u64)(c##i == WILD && wild ? wild : card_value(c##i));                     \
    t->pos[i] = 1ULL << c##i;                                                             \
    m &= m - 1;                                                                           \
    n = i + 1;
    if (m) {
        TAB_CARD(0)
        lo = v0 << 8;
        if (m) {
            TAB_CARD(1)
            lo |= (lo + v1 * 0x0101ULL) << 16;
            if (m) {
                TAB_CARD(2)
                lo |= (lo + v2 * 0x01010101ULL) << 32;
                if (m) {
                    TAB_CARD(3)
                    hi = lo + v3 * 0x0101010101010101ULL;
                    if (m) return tab_init_large(s, t, table, wild);
                }
            }
        }
    }
#undef TAB_CARD
    /* then each subset's bit under its sum (unrolled: the last subset first) */
    memset(t->subsets, 0, sizeof t->subsets);
#define TAB_SUBSET(k)                                                                     \
    case k: {                                                                             \
        unsigned sum = (unsigned)((k < 8 ? lo >> 8 * (k & 7) : hi >> 8 * (k & 7)) & 255); \
        t->subsets[sum < 15 ? sum : 15] |= 1u << k;                                       \
    } /* fall through */
    switch ((1 << n) - 1) {
        TAB_SUBSET(15) TAB_SUBSET(14) TAB_SUBSET(13) TAB_SUBSET(12) TAB_SUBSET(11)
        TAB_SUBSET(10) TAB_SUBSET(9) TAB_SUBSET(8) TAB_SUBSET(7) TAB_SUBSET(6) TAB_SUBSET(5)
        TAB_SUBSET(4) TAB_SUBSET(3) TAB_SUBSET(2) TAB_SUBSET(1)
    default:
        break;
    }
#undef TAB_SUBSET
    t->ncards = n;
    t->tiny = t->dp = 1;
    return 0;
}

/* A tiny table's captures of played value v (not the ace sweep), as position masks: the
   subsets summing to v (only single cards when pairing takes precedence and one pairs)
   and those summing to 15 - v. */
static inline unsigned tiny_bits(const Tab *t, int v, int pp) {
    unsigned eq = t->subsets[v];
    if (pp && (eq & SINGLES)) eq &= SINGLES;
    return eq | t->subsets[15 - v];
}

/* the card mask of a tiny table's subset at position mask m */
static inline u64 tiny_mask(const Tab *t, unsigned m) {
    u64 mask = 0;
    for (; m; m &= m - 1) mask |= t->pos[__builtin_ctz(m)];
    return mask;
}

static void sort_u64(u64 *a, int n) {
    for (int i = 1; i < n; i++) {
        u64 x = a[i];
        int j = i - 1;
        while (j >= 0 && a[j] > x) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = x;
    }
}

static int cmp_u64(const void *a, const void *b) {
    u64 x = *(const u64 *)a, y = *(const u64 *)b;
    return x < y ? -1 : x > y;
}

/* Capture masks of a played value, ascending (captures._subset_shape); NULL on error. */
static const u64 *tab_caps(Scratch *s, Tab *t, int v, int pp, int *len) {
    if (!(t->have >> v & 1)) {
        int start = s->ncaps;
        if (v == 1 && t->ncards && !t->ace_on_table) {
            if (grow((void **)&s->caps, &s->caps_cap, s->ncaps + 1, sizeof(u64))) return NULL;
            s->caps[s->ncaps++] = t->table; /* the ace sweep: its only capture */
        } else if (t->tiny) {
            unsigned bits = tiny_bits(t, v, pp);
            if (grow((void **)&s->caps, &s->caps_cap, s->ncaps + 16, sizeof(u64))) return NULL;
            for (; bits; bits &= bits - 1)
                s->caps[s->ncaps++] = tiny_mask(t, (unsigned)__builtin_ctz(bits));
        } else if (t->dp) {
            int pairing = 0, full = 1 << t->ncards;
            if (pp)
                for (int i = 0; i < t->ncards; i++)
                    if (t->vals[i] == v) pairing = 1;
            int adding_ok = !(pp && pairing);
            if (grow((void **)&s->caps, &s->caps_cap, s->ncaps + full, sizeof(u64))) return NULL;
            for (int m = 1; m < full; m++) {
                int sum = s->dp_sum[m];
                if ((sum == v && (adding_ok || !(m & (m - 1)))) || sum == 15 - v)
                    s->caps[s->ncaps++] = s->dp_mask[m];
            }
        } else {
            int pairing = 0;
            if (pp)
                for (int i = 0; i < s->nsub; i++)
                    if (s->sub_size[i] == 1 && s->sub_sum[i] == v) pairing = 1;
            for (int i = 0; i < s->nsub; i++) {
                int sum = s->sub_sum[i];
                if ((sum == v && (s->sub_size[i] == 1 || !(pp && pairing))) || sum == 15 - v) {
                    if (s->ncaps >= s->caps_cap &&
                        grow((void **)&s->caps, &s->caps_cap, s->ncaps + 1, sizeof(u64)))
                        return NULL;
                    s->caps[s->ncaps++] = s->sub_mask[i];
                }
            }
            int n = s->ncaps - start;
            if (n < 48)
                sort_u64(s->caps + start, n);
            else
                qsort(s->caps + start, (size_t)n, sizeof(u64), cmp_u64);
        }
        t->have |= 1u << v;
        t->start[v] = start;
        t->len[v] = s->ncaps - start;
    }
    static const u64 none[1] = {0};
    *len = t->len[v];
    return s->caps ? s->caps + t->start[v] : none; /* NULL only for a memory error */
}

/* ------------------------------------------------------------------ declarations (actions.py) */

/* Declaration codes of a 3-card hand, ascending (declaration_codes): a low hand (the values
   sum to 9 or less) is 1 << 4, three of a kind 2 << 4, and the 7H among the cards names
   its value w in the low four bits, each w that makes either (the lows first). */
static int decl_codes(u64 hand, int *out) {
    u64 two = hand & (hand - 1), one = two & (two - 1);
    if (!one || one & (one - 1)) return 0; /* not 3 cards */
    if (!(hand >> WILD & 1)) {
        int a = card_value(__builtin_ctzll(hand)), b = card_value(__builtin_ctzll(two)),
            c = card_value(__builtin_ctzll(one));
        if (a == b && b == c) {
            out[0] = 2 << 4;
            return 1;
        }
        if (a + b + c <= 9) {
            out[0] = 1 << 4;
            return 1;
        }
        return 0;
    }
    u64 others = hand & ~(1ULL << WILD);
    int a = card_value(__builtin_ctzll(others)), b = card_value(63 - __builtin_clzll(others));
    int n = 0;
    for (int w = 1; w <= 9 - a - b; w++) /* w <= 7: a named 10 is never low */
        if (!(a == b && w == a)) out[n++] = 1 << 4 | w;
    if (a == b) out[n++] = 2 << 4 | a;
    return n;
}

/* ------------------------------------------------------------------ legal actions (game.py) */

/* The codes of one card played at value v on a tiny table (base: the card and its
   declaration) into out, in the protocol's order; how many. */
static inline __attribute__((always_inline)) int tiny_codes(const Tab *t, u64 *out, u64 base, int v,
                                                           int must, int pp) {
    int k = 0;
    if (!t->ncards) { /* an empty table: no capture */
        out[0] = base;
        return 1;
    }
    if (v == 1 && !t->ace_on_table) { /* the ace sweep: its only capture */
        if (!must) out[k++] = base;
        out[k++] = base | t->table << 12;
        return k;
    }
    unsigned bits = tiny_bits(t, v, pp);
    if (!bits || !must) out[k++] = base;
    for (; bits; bits &= bits - 1) out[k++] = base | tiny_mask(t, (unsigned)__builtin_ctz(bits)) << 12;
    return k;
}
/* the most codes of a hand on a tiny table: 3 cards, 8 declarations or none, a capture
   per subset or none */
#define TINY_CODES (3 * 9 * (1 << TINY_MAX))

/* legal_codes on a tiny table, for a hand of at most 3 cards */
static inline __attribute__((always_inline)) int tiny_legal_codes(Scratch *s, const Tab *t, u64 hand,
                                                                  int wild, int must, int pp) {
    if (s->codes_cap < TINY_CODES &&
        grow((void **)&s->codes, &s->codes_cap, TINY_CODES, sizeof(u64)))
        return -1;
    u64 *out = s->codes;
    int cards[3], at[4], nc = 0, k = 0;
    for (u64 m = hand; m; m &= m - 1) {
        int c = __builtin_ctzll(m);
        cards[nc] = c;
        at[nc++] = k;
        k += tiny_codes(t, out + k, (u64)c, c == WILD && wild ? wild : card_value(c), must, pp);
    }
    at[nc] = k;
    if (nc == 3) {
        int decls[9];
        int nd = decl_codes(hand, decls);
        for (int d = 0; d < nd; d++) {
            u64 declared = (u64)decls[d] << 6;
            int named = decls[d] & 15;
            for (int i = 0; i < 3; i++) {
                if (cards[i] == WILD && named) { /* the 7H at its named value */
                    k += tiny_codes(t, out + k, (u64)WILD | declared, named, must, pp);
                } else { /* the card's codes undeclared, declaring */
                    for (int j = at[i]; j < at[i + 1]; j++) out[k++] = out[j] | declared;
                }
            }
        }
    }
    s->ncodes = k;
    return 0;
}

/* legal_codes past a tiny table or a hand of 3 cards: through tab_caps */
__attribute__((noinline)) static int legal_codes_large(Scratch *s, Tab *t, u64 hand, int wild,
                                                       int must, int pp) {
    int cards[NUM_CARDS], len;
    int nc = cards_of(hand, cards);
    s->ncodes = 0;
    for (int i = 0; i < nc; i++) {
        int c = cards[i];
        int v = c == WILD && wild ? wild : card_value(c);
        const u64 *sets = tab_caps(s, t, v, pp, &len);
        if (!sets) return -1;
        if (!len || !must)
            if (push_code(s, (u64)c)) return -1;
        for (int j = 0; j < len; j++)
            if (push_code(s, (u64)c | s->caps[t->start[v] + j] << 12)) return -1;
    }
    if (nc == 3) {
        int decls[10];
        int nd = decl_codes(hand, decls);
        for (int d = 0; d < nd; d++) {
            int named = (decls[d] & 15) ? (decls[d] & 15) : wild;
            for (int i = 0; i < nc; i++) {
                int c = cards[i];
                int v = c == WILD && named ? named : card_value(c);
                const u64 *sets = tab_caps(s, t, v, pp, &len);
                if (!sets) return -1;
                u64 base = (u64)c | (u64)decls[d] << 6;
                if (!len || !must)
                    if (push_code(s, base)) return -1;
                for (int j = 0; j < len; j++)
                    if (push_code(s, base | s->caps[t->start[v] + j] << 12)) return -1;
            }
        }
    }
    return 0;
}

/* Game.legal_codes into s->codes; the table entry t must be for (table, wild). */
static inline __attribute__((always_inline)) int legal_codes(Scratch *s, Tab *t, u64 hand, int wild,
                                                             int must, int pp) {
    u64 fourth = hand & (hand - 1);
    fourth &= fourth - 1;
    fourth &= fourth - 1;
    if (t->tiny && !fourth) return tiny_legal_codes(s, t, hand, wild, must, pp);
    return legal_codes_large(s, t, hand, wild, must, pp);
}

/* ------------------------------------------------------------------ the random loops' pick */

/* The random-play loops (bench_rules, random_deals_digest in _native.c) need only how many
   codes legal_codes gives and the one at rng_below of that many. random_code counts the
   codes of each card of the hand on a tiny table and builds only the code drawn: the same
   code at the same index as legal_codes's list (tests/rules/test_same_games.py holds the
   loops to games recorded before). A card's codes, as tiny_codes writes them, are the card
   alone when it need not capture (nocap), then one code per set bit of a position mask
   (bits: a bit per subset of the table, ascending). The subsets' value sums are 16 bytes,
   one per position mask (tab_init's lo and hi); the subsets summing to v are the bytes
   equal to v, compared 16 at a time (SSE2, every x86-64) or a word at a time. */
#if defined(__SSE2__) && !defined(CIRULLA_NO_SSE2)
#include <emmintrin.h>
#define SPLAT16(v) {v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v}
static const uint8_t BYTE_SPLAT[16][16] __attribute__((aligned(16))) = {
    SPLAT16(0),  SPLAT16(1),  SPLAT16(2),  SPLAT16(3),  SPLAT16(4),  SPLAT16(5),
    SPLAT16(6),  SPLAT16(7),  SPLAT16(8),  SPLAT16(9),  SPLAT16(10), SPLAT16(11),
    SPLAT16(12), SPLAT16(13), SPLAT16(14), SPLAT16(15)};
typedef __m128i SubsetSums;
static inline SubsetSums subset_sums(u64 lo, u64 hi) {
    return _mm_set_epi64x((long long)hi, (long long)lo);
}
/* bit k: subset k's values sum to v */
static inline unsigned sums_equal(SubsetSums sums, int v) {
    __m128i splat = _mm_load_si128((const __m128i *)BYTE_SPLAT[v]);
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(sums, splat));
}
/* A played value v captures the subsets summing to v or to 15 - v: those whose sum s has
   |2s - 15| = |2v - 15| (s <= 40: 2s fits a byte), so one compare a card where two were:
   the table's |2s - 15| computed once (saturating subtractions), then per card the bytes
   equal to |2v - 15| (DIST_SPLAT[v]). */
typedef __m128i SubsetDist;
static inline SubsetDist subset_dist(SubsetSums sums) {
    __m128i twice = _mm_add_epi8(sums, sums), fifteen = _mm_set1_epi8(15);
    return _mm_or_si128(_mm_subs_epu8(twice, fifteen), _mm_subs_epu8(fifteen, twice));
}
#define DIST16(v) SPLAT16((v) < 8 ? 15 - 2 * (v) : 2 * (v) - 15)
static const uint8_t DIST_SPLAT[11][16] __attribute__((aligned(16))) = {
    DIST16(0), DIST16(1), DIST16(2), DIST16(3), DIST16(4), DIST16(5),
    DIST16(6), DIST16(7), DIST16(8), DIST16(9), DIST16(10)};
#undef DIST16
#undef SPLAT16
/* bit k: subset k's values sum to v or to 15 - v (v from 1 to 10) */
static inline unsigned dist_equal(SubsetDist dist, int v) {
    __m128i splat = _mm_load_si128((const __m128i *)DIST_SPLAT[v]);
    return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(dist, splat));
}
#else
typedef struct {
    u64 lo, hi;
} SubsetSums;
static inline SubsetSums subset_sums(u64 lo, u64 hi) {
    SubsetSums s = {lo, hi};
    return s;
}
/* bit i: byte i of x is zero (exact: no borrow crosses the bytes) */
static inline unsigned zero_bytes(u64 x) {
    const u64 low7 = 0x7F7F7F7F7F7F7F7FULL;
    u64 y = ~(((x & low7) + low7) | x | low7); /* 0x80 in each zero byte */
    return (unsigned)(((y >> 7) * 0x0102040810204080ULL) >> 56);
}
static inline unsigned sums_equal(SubsetSums sums, int v) {
    u64 splat = 0x0101010101010101ULL * (u64)v;
    return zero_bytes(sums.lo ^ splat) | zero_bytes(sums.hi ^ splat) << 8;
}
typedef SubsetSums SubsetDist; /* a word at a time: the two compares */
static inline SubsetDist subset_dist(SubsetSums sums) { return sums; }
static inline unsigned dist_equal(SubsetDist sums, int v) {
    return sums_equal(sums, v) | sums_equal(sums, 15 - v);
}
#endif

#define POPC_2(n) n, n + 1, n + 1, n + 2
#define POPC_4(n) POPC_2(n), POPC_2(n + 1), POPC_2(n + 1), POPC_2(n + 2)
#define POPC_6(n) POPC_4(n), POPC_4(n + 1), POPC_4(n + 1), POPC_4(n + 2)
static const uint8_t POPC8[256] = {POPC_6(0), POPC_6(1), POPC_6(1), POPC_6(2)};
#undef POPC_2
#undef POPC_4
#undef POPC_6
/* set bits of a 16-bit mask (a table lookup: x86-64's baseline has no popcnt) */
static inline unsigned popc16(unsigned m) { return POPC8[m & 255] + POPC8[m >> 8]; }

/* code j of a card's codes (base: the card and its declaration) on a tiny table whose
   cards, ascending, are the bits p0 to p3 (0 past the table's size) */
static inline u64 segment_code(u64 base, unsigned bits, unsigned nocap, unsigned j, u64 p0,
                               u64 p1, u64 p2, u64 p3) {
    if (nocap) {
        if (!j) return base;
        j--;
    }
    for (; j; j--) bits &= bits - 1;
    unsigned m = (unsigned)__builtin_ctz(bits);
    u64 cards = (p0 & -(u64)(m & 1)) | (p1 & -(u64)(m >> 1 & 1)) | (p2 & -(u64)(m >> 2 & 1)) |
                (p3 & -(u64)(m >> 3 & 1));
    return base | cards << 12;
}

/* random_code past what it counts (a table of 6 cards or more, a hand of 4): the list */
__attribute__((noinline)) static int random_code_listed(Scratch *s, u64 table, u64 hand,
                                                        int wild, int must, int pp, Rng *rng,
                                                        u64 *code) {
    Tab t;
    if (tab_init(s, &t, table, wild) || legal_codes(s, &t, hand, wild, must, pp)) return -1;
    *code = s->codes[rng_below(rng, (uint32_t)s->ncodes)];
    return s->ncodes;
}

/* random_code's 3-card hand holding the 7H when it may declare (decl_codes: each value w
   the 7H may name, the lows first, then three of a kind), on a tiny table (tab_init): the
   undeclared codes, then for each declaration the same cards declared, the 7H's at its
   named value, as tiny_legal_codes writes them; a and a2 are the other cards' values */
__attribute__((noinline)) static int random_code_7h(Scratch *s, u64 table, u64 hand, int wild,
                                                    int must, int pp, int a, int a2, Rng *rng,
                                                    u64 *code) {
    Tab t;
    tab_init(s, &t, table, wild); /* 4 cards or fewer: the tiny table */
    u64 p[4] = {0, 0, 0, 0};
    for (int i = 0; i < t.ncards; i++) p[i] = t.pos[i];
    int sweeps = t.ncards && !t.ace_on_table;
    unsigned full = (1u << t.ncards) - 1;
    int h[3], decls[10], nd = 0, at = 0;
    cards_of(hand, h);
    unsigned b[3], n[3], k[3], total = 0;
    for (int i = 0; i < 3; i++) { /* the cards undeclared */
        int v = h[i] == WILD && wild ? wild : card_value(h[i]);
        b[i] = v == 1 && sweeps ? 1u << full : tiny_bits(&t, v, pp);
        n[i] = !must || !b[i];
        k[i] = n[i] + popc16(b[i]);
        total += k[i];
        if (h[i] == WILD) at = i;
    }
    for (int w = 1; w <= 9 - a - a2; w++)
        if (!(a == a2 && w == a)) decls[nd++] = 1 << 4 | w;
    if (a == a2) decls[nd++] = 2 << 4 | a;
    unsigned others = total - k[at], count = total, nb[10], nn[10], nk[10];
    for (int d = 0; d < nd; d++) { /* the 7H's codes at its named value */
        int v = decls[d] & 15;
        nb[d] = v == 1 && sweeps ? 1u << full : tiny_bits(&t, v, pp);
        nn[d] = !must || !nb[d];
        nk[d] = nn[d] + popc16(nb[d]);
        count += others + nk[d];
    }
    unsigned j = rng_below(rng, count);
    u64 base = 0;
    if (j >= total) {
        j -= total;
        int d = 0;
        while (j >= others + nk[d]) j -= others + nk[d++];
        base = (u64)decls[d] << 6;
        b[at] = nb[d];
        n[at] = nn[d];
        k[at] = nk[d];
    }
    int i = 0;
    while (j >= k[i]) j -= k[i++];
    *code = segment_code(base | (u64)h[i], b[i], n[i], j, p[0], p[1], p[2], p[3]);
    return (int)count;
}

/* random_code on a table of 5 cards (past tiny; the most often after it): the subsets of
   the first 4 (tab_init's sums) and the same with the fifth, 32 position masks; a hand of
   3 cards or fewer, its codes counted and the one drawn built as random_code does */
__attribute__((noinline)) static int random_code_5(Scratch *s, u64 table, u64 hand, int wild,
                                                   int must, int pp, Rng *rng, u64 *code) {
    u64 p[5], m = table;
    u64 v[5];
    for (int i = 0; i < 5; i++) {
        p[i] = m & -m;
        m ^= p[i];
        int c = __builtin_ctzll(p[i]);
        v[i] = (u64)(c == WILD && wild ? wild : card_value(c));
    }
    u64 lo = v[0] << 8;
    lo |= (lo + v[1] * 0x0101ULL) << 16;
    lo |= (lo + v[2] * 0x01010101ULL) << 32;
    u64 hi = lo + v[3] * 0x0101010101010101ULL, fifth = v[4] * 0x0101010101010101ULL;
    SubsetSums low = subset_sums(lo, hi), high = subset_sums(lo + fifth, hi + fifth);
    int sweeps = !(table & ACES) && !(wild == 1 && (table >> WILD & 1));
    int h[NUM_CARDS], nh = cards_of(hand, h);
    if (nh > 3) return random_code_listed(s, table, hand, wild, must, pp, rng, code);
    unsigned b[3], n[3], k[3], total = 0;
    for (int i = 0; i < nh; i++) {
        int val = h[i] == WILD && wild ? wild : card_value(h[i]);
        if (val == 1 && sweeps) {
            b[i] = 1u << 31; /* the whole table: its only capture */
        } else {
            unsigned eq = sums_equal(low, val) | sums_equal(high, val) << 16;
            if (pp && (eq & (SINGLES | 1u << 16))) eq &= SINGLES | 1u << 16;
            b[i] = eq | sums_equal(low, 15 - val) | sums_equal(high, 15 - val) << 16;
        }
        n[i] = !must || !b[i];
        k[i] = n[i] + popc16(b[i] & 0xFFFF) + popc16(b[i] >> 16);
        total += k[i];
    }
    u64 declared = 0;
    if (nh == 3) {
        if (hand >> WILD & 1) {
            u64 others = hand & ~(1ULL << WILD);
            int a = card_value(__builtin_ctzll(others));
            int a2 = card_value(63 - __builtin_clzll(others));
            if (a == a2 || a + a2 <= 8) /* declarations naming values */
                return random_code_listed(s, table, hand, wild, must, pp, rng, code);
        } else {
            int a = card_value(h[0]), a2 = card_value(h[1]), a3 = card_value(h[2]);
            if (a == a2 && a2 == a3)
                declared = 2 << 4;
            else if (a + a2 + a3 <= 9)
                declared = 1 << 4;
        }
    }
    unsigned count = declared ? 2 * total : total, j = rng_below(rng, count);
    u64 base = 0;
    if (j >= total) {
        j -= total;
        base = declared << 6;
    }
    int i = 0;
    while (j >= k[i]) j -= k[i++];
    base |= (u64)h[i];
    if (n[i]) {
        if (!j) {
            *code = base;
            return (int)count;
        }
        j--;
    }
    unsigned bits = b[i];
    for (; j; j--) bits &= bits - 1;
    u64 cards = 0;
    for (unsigned sub = (unsigned)__builtin_ctz(bits); sub; sub &= sub - 1)
        cards |= p[__builtin_ctz(sub)];
    *code = base | cards << 12;
    return (int)count;
}

/* VALUE_AS[w][c]: card c's value when the 7H is worth w (0: its own, 7), a byte load where
   card_value and the 7H's test were five instructions */
#define VALUE_ROW(w)                                                                      \
    {1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5,                          \
     6, 6, 6, 6, 7, (w) ? (w) : 7, 7, 7, 8, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 10}
static const uint8_t VALUE_AS[11][NUM_CARDS] = {
    VALUE_ROW(0), VALUE_ROW(1), VALUE_ROW(2), VALUE_ROW(3), VALUE_ROW(4), VALUE_ROW(5),
    VALUE_ROW(6), VALUE_ROW(7), VALUE_ROW(8), VALUE_ROW(9), VALUE_ROW(10)};
#undef VALUE_ROW

/* legal_codes(table, hand)[rng_below(rng, n)] into *code; returns n (-1: no memory). */
static inline __attribute__((always_inline)) int random_code(Scratch *s, u64 table, u64 hand,
                                                             int wild, int must, int pp,
                                                             int size, Rng *rng, u64 *code) {
    const uint8_t *value_as = VALUE_AS[wild]; /* the 7H at its named value */
#define RC_VALUE(c) ((int)value_as[c])
    /* the table: its cards' bits and its subsets' value sums (as tab_init) */
    u64 m = table, p0 = 0, p1 = 0, p2 = 0, p3 = 0, lo = 0, hi = 0;
    unsigned full = 0; /* the position mask of the whole table */
#define RC_CARD(i)                                                                        \
    p##i = m & -m;                                                                        \
    m ^= p##i;                                                                            \
    int c##i = __builtin_ctzll(p##i);                                                     \
    u64 v##i = (u64)RC_VALUE(c##i);
    if (m) {
        RC_CARD(0)
        lo = v0 << 8;
        full = 1;
        if (m) {
            RC_CARD(1)
            lo |= (lo + v1 * 0x0101ULL) << 16;
            full = 3;
            if (m) {
                RC_CARD(2)
                lo |= (lo + v2 * 0x01010101ULL) << 32;
                full = 7;
                if (m) {
                    RC_CARD(3)
                    hi = lo + v3 * 0x0101010101010101ULL;
                    full = 15;
                    if (m) {
                        if (m & (m - 1)) goto listed;
                        return random_code_5(s, table, hand, wild, must, pp, rng, code);
                    }
                }
            }
        }
    }
#undef RC_CARD
    SubsetSums sums = subset_sums(lo, hi);
    SubsetDist dist = subset_dist(sums); /* unused (not computed) when pp */
    /* a played ace takes the table when no ace is on it */
    int ace = table && !(table & ACES) && !(wild == 1 && (table >> WILD & 1)) ? 1 : 0;
    /* each card of the hand (ascending, 1 to 3 of them): its captures' bits, whether it may
       go without one (nocap), and so its codes' count */
#define RC_HAND(i)                                                                        \
    int h##i = __builtin_ctzll(h);                                                        \
    h &= h - 1;                                                                           \
    unsigned b##i, n##i, k##i;                                                            \
    int hv##i = RC_VALUE(h##i);                                                           \
    {                                                                                     \
        int v = hv##i;                                                                    \
        if (pp) {                                                                         \
            unsigned eq = sums_equal(sums, v);                                            \
            if (eq & SINGLES) eq &= SINGLES;                                              \
            b##i = eq | sums_equal(sums, 15 - v);                                         \
        } else {                                                                          \
            b##i = dist_equal(dist, v);                                                   \
        }                                                                                 \
        if (v == ace) b##i = 1u << full; /* the sweep: its only capture */                \
        n##i = !must || !b##i;                                                            \
        k##i = n##i + popc16(b##i);                                                       \
    }
    u64 h = hand;
    if (size && !h) goto listed; /* size: the hand's cards when the caller knows (1 to 3) */
    RC_HAND(0)
    unsigned total = k0;
    u64 declared = 0; /* a 3-card hand's declaration (decl_codes) */
    if (size == 1 && h) goto listed;
    if (size ? size >= 2 : h != 0) {
        if (size && !h) goto listed;
        RC_HAND(1)
        total += k1;
        if (size == 2 && h) goto listed;
        if (size ? size >= 3 : h != 0) {
            if (size && !h) goto listed;
            RC_HAND(2)
            total += k2;
            if (h) goto listed;
            if (hand >> WILD & 1) {
                u64 others = hand & ~(1ULL << WILD);
                int a = card_value(__builtin_ctzll(others));
                int b = card_value(63 - __builtin_clzll(others));
                if (a == b || a + b <= 8) /* declarations naming values */
                    return random_code_7h(s, table, hand, wild, must, pp, a, b, rng, code);
            } else {
                int a = hv0, b = hv1, c = hv2;
                if (a == b && b == c)
                    declared = 2 << 4;
                else if (a + b + c <= 9)
                    declared = 1 << 4;
            }
            unsigned n = declared ? 2 * total : total;
            unsigned j = rng_below(rng, n);
            u64 base = 0;
            if (j >= total) { /* the declaring codes: the same again, declared */
                j -= total;
                base = declared << 6;
            }
            if (j < k0)
                *code = segment_code(base | (u64)h0, b0, n0, j, p0, p1, p2, p3);
            else if (j - k0 < k1)
                *code = segment_code(base | (u64)h1, b1, n1, j - k0, p0, p1, p2, p3);
            else
                *code = segment_code(base | (u64)h2, b2, n2, j - k0 - k1, p0, p1, p2, p3);
            return (int)n;
        }
        unsigned j = rng_below(rng, total);
        if (j < k0)
            *code = segment_code((u64)h0, b0, n0, j, p0, p1, p2, p3);
        else
            *code = segment_code((u64)h1, b1, n1, j - k0, p0, p1, p2, p3);
        return (int)total;
    }
#undef RC_HAND
#undef RC_VALUE
    *code = segment_code((u64)h0, b0, n0, rng_below(rng, total), p0, p1, p2, p3);
    return (int)total;
listed:
    return random_code_listed(s, table, hand, wild, must, pp, rng, code);
}

/* ------------------------------------------------------------------ scoring (scoring.py) */

enum { S_CARDS, S_COINS, S_SETTEBELLO, S_PRIMIERA, S_SCOPE, S_GRANDE, S_PICCOLA, S_ITEMS };

static int unique_top(const int *v, int n) {
    int best = v[0], at = 0, count = 1;
    for (int i = 1; i < n; i++) {
        if (v[i] > best) {
            best = v[i];
            at = i;
            count = 1;
        } else if (v[i] == best)
            count++;
    }
    return count == 1 ? at : -1;
}

static int piccola_points(u64 m, int piccola_max) {
    /* the coins held from the ace up: up to the first missing one (no loop: its end is as
       random as the deal) */
    u64 missing = ~m & 0x1111111111ULL;
    int run = missing ? __builtin_ctzll(missing) >> 2 : 10;
    run = run < piccola_max ? run : piccola_max;
    return run >= 3 ? run : 0;
}

/* a suit's primiera points (0 without a card of it), its cards at bits 0, 4, ... of x: its
   ace to 7 gathered into 7 bits (PRIM7: the best of them), else 10 for a face card */
static inline int suit_primiera(u64 x) {
    u64 y = x & 0x1111111ULL, z = (y | y >> 3) & 0x03030303ULL;
    int best = PRIM7[(z | z >> 6 | z >> 12 | z >> 18) & 127];
    return best ? best : (x & 0x1110000000ULL) ? 10 : 0;
}

/* score_deal: items per side, and the cappotto side (-1: none). */
static int score_deal(const Opts *o, int sides, const u64 *captured, const int *scope,
                      int items[][S_ITEMS]) {
    int n_cards[MAX_PLAYERS], n_coins[MAX_PLAYERS], prim[MAX_PLAYERS];
    for (int i = 0; i < sides; i++) {
        u64 m = captured[i];
        n_cards[i] = popc(m);
        /* the coins are bits 0, 4, ..., 36: times 0x1111111111, nibble 9 sums them (no
           nibble below it passes 9, so none carries) */
        n_coins[i] = (int)(((m & COINS_MASK) * 0x1111111111ULL) >> 36 & 15);
        int p0 = suit_primiera(m), p1 = suit_primiera(m >> 1), p2 = suit_primiera(m >> 2),
            p3 = suit_primiera(m >> 3);
        int total = p0 + p1 + p2 + p3, complete = p0 && p1 && p2 && p3;
        prim[i] = complete || !o->primiera_needs_all_suits ? total : -1;
    }
    int cards_w = unique_top(n_cards, sides), coins_w = unique_top(n_coins, sides);
    int prim_w = unique_top(prim, sides);
    if (prim_w >= 0 && prim[prim_w] < 0) prim_w = -1;
    int cappotto = -1;
    for (int i = 0; i < sides; i++) {
        u64 m = captured[i];
        items[i][S_CARDS] = cards_w == i;
        items[i][S_COINS] = coins_w == i;
        items[i][S_SETTEBELLO] = (int)(m >> SETTEBELLO & 1);
        items[i][S_PRIMIERA] = prim_w == i;
        items[i][S_SCOPE] = scope[i];
        items[i][S_GRANDE] = (m & GRANDE_MASK) == GRANDE_MASK ? 5 : 0;
        items[i][S_PICCOLA] = piccola_points(m, o->piccola_max);
        if (cappotto < 0 && n_coins[i] == 10) cappotto = i;
    }
    return o->cappotto ? cappotto : -1;
}

static int dealer_bonus(u64 table, int low_bonus) {
    int base = 0;
    for (u64 m = table & ~(1ULL << WILD); m; m &= m - 1) base += card_value(__builtin_ctzll(m));
    if (!(table >> WILD & 1))
        return base == 15 ? 1 : base == 30 ? 2 : low_bonus && base <= 9 ? 3 : 0;
    /* the 7H at any value from 1 to 10: the best bonus one of the sums makes (no loop) */
    if (low_bonus && base + 1 <= 9) return 3;
    if (base + 1 <= 30 && 30 <= base + 10) return 2;
    if (base + 1 <= 15 && 15 <= base + 10) return 1;
    return 0;
}

/* ------------------------------------------------------------------ the game (game.py) */

enum {
    EV_DEAL_STARTED = 1,
    EV_REDEAL,
    EV_HAND_DEALT,
    EV_ROUND_DEALT,
    EV_DEALER_BONUS,
    EV_DECLARED,
    EV_CARD_PLAYED,
    EV_LAST_TAKE,
    EV_DEAL_SCORED,
    EV_GAME_OVER
};

typedef int (*EmitFn)(void *ctx, int type, const long long *args, int n);
typedef int (*DeckFn)(void *ctx, int deal_no, uint8_t *deck);

typedef struct {
    Opts o;
    int n, sides, side_of[MAX_PLAYERS];
    int dealer, deal_no, round, turn, in_hands;
    int totals[MAX_PLAYERS], winner, cappotto, deal_only, deal_over;
    u64 hands[MAX_PLAYERS], table, captured[MAX_PLAYERS], declared[MAX_PLAYERS];
    int scope[MAX_PLAYERS], last_taker, wild;
    uint8_t stock[NUM_CARDS]; /* like Game.stock: the next card dealt is stock[nstock - 1] */
    int nstock;
    int score[MAX_PLAYERS][S_ITEMS], score_cappotto, has_score;
    int pause_at_round_end; /* 1: g_play stops when the hands are empty (the caller deals) */
    EmitFn emit; /* NULL: no events (search) */
    void *emit_ctx;
    DeckFn deck;
    void *deck_ctx;
} G;

#define EMIT(g, type, ...)                                                    \
    do {                                                                      \
        if ((g)->emit) {                                                      \
            long long a_[] = {__VA_ARGS__};                                   \
            if ((g)->emit((g)->emit_ctx, type, a_, (int)(sizeof a_ / sizeof a_[0]))) \
                return -1;                                                    \
        }                                                                     \
    } while (0)

static void g_init(G *g, const Opts *o) {
    memset(g, 0, sizeof *g);
    g->o = *o;
    g->n = o->players;
    g->sides = o->players == 4 ? 2 : o->players;
    for (int s = 0; s < g->n; s++) g->side_of[s] = o->players == 4 ? s % 2 : s;
    g->winner = -1;
    g->last_taker = -1;
    g->score_cappotto = -1;
}

static int emit_hands(G *g, int round) {
    for (int s = 0; s < g->n; s++) EMIT(g, EV_HAND_DEALT, s, round, (long long)g->hands[s]);
    return 0;
}

static int g_start_deal(G *g) { /* Game._start_deal */
    int n = g->n;
    uint8_t deck[NUM_CARDS];
    u64 table;
    g->deal_no++;
    /* (dealer + 1) % n without a division: the dealer is a seat, or -1 before the first deal */
    int dealer = g->dealer + 1 < n ? g->dealer + 1 : 0;
    g->dealer = dealer;
    for (;;) {
        if (g->deck(g->deck_ctx, g->deal_no, deck)) return -1;
        memset(g->hands, 0, sizeof g->hands);
        /* card k to seat (dealer + 1 + k) % n: seat j after the dealer gets cards j, j + n
           and j + 2n */
        for (int j = 0, seat = dealer; j < n; j++) {
            seat = seat + 1 < n ? seat + 1 : 0;
            g->hands[seat] = 1ULL << deck[j] | 1ULL << deck[j + n] | 1ULL << deck[j + 2 * n];
        }
        const uint8_t *four = deck + 3 * n;
        table = 1ULL << four[0] | 1ULL << four[1] | 1ULL << four[2] | 1ULL << four[3];
        u64 aces = table & ACES;
        if (!(aces & (aces - 1))) break; /* fewer than 2 aces */
        EMIT(g, EV_REDEAL, g->deal_no, dealer, (long long)table);
    }
    g->table = table;
    g->nstock = NUM_CARDS - 3 * n - 4;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    /* the stock is the deck's end reversed: 8 cards at a time (all 40: past nstock unused) */
    for (int j = 0; j < NUM_CARDS; j += 8) {
        u64 w;
        memcpy(&w, deck + NUM_CARDS - 8 - j, 8);
        w = __builtin_bswap64(w);
        memcpy(g->stock + j, &w, 8);
    }
#else
    for (int j = 0; j < g->nstock; j++) g->stock[j] = deck[NUM_CARDS - 1 - j];
#endif
    memset(g->captured, 0, sizeof g->captured);
    memset(g->scope, 0, sizeof g->scope);
    memset(g->declared, 0, sizeof g->declared);
    g->last_taker = -1;
    g->wild = 0;
    g->round = 1;
    g->turn = dealer + 1 < n ? dealer + 1 : 0;
    g->in_hands = 3 * n;
    g->deal_over = 0;
    EMIT(g, EV_DEAL_STARTED, g->deal_no, dealer, (long long)table, n);
    if (g->emit && emit_hands(g, 1)) return -1;
    int bonus = dealer_bonus(table, g->o.dealer_low_bonus);
    if (bonus) {
        int side = g->side_of[dealer];
        g->captured[side] |= table;
        g->scope[side] += bonus;
        g->last_taker = side;
        g->table = 0;
        EMIT(g, EV_DEALER_BONUS, dealer, side, (long long)table, bonus);
    }
    return 0;
}

__attribute__((noinline)) static int g_end_deal(G *g) { /* Game._end_deal */
    u64 leftover = g->table;
    int taker = g->last_taker;
    if (taker >= 0) {
        g->captured[taker] |= leftover;
        g->table = 0;
    }
    g->score_cappotto = score_deal(&g->o, g->sides, g->captured, g->scope, g->score);
    g->has_score = 1;
    _Static_assert(S_ITEMS == 7, "a side's deal points: its seven items");
    for (int i = 0; i < g->sides; i++) {
        const int *items = g->score[i];
        g->totals[i] += items[0] + items[1] + items[2] + items[3] + items[4] + items[5] + items[6];
    }
    if (g->emit) {
        long long a[2 + 2 + MAX_PLAYERS * S_ITEMS + MAX_PLAYERS];
        int k = 0;
        EMIT(g, EV_LAST_TAKE, taker, (long long)leftover);
        a[k++] = g->deal_no;
        a[k++] = g->score_cappotto;
        a[k++] = g->sides;
        for (int i = 0; i < g->sides; i++)
            for (int j = 0; j < S_ITEMS; j++) a[k++] = g->score[i][j];
        for (int i = 0; i < g->sides; i++) a[k++] = g->totals[i];
        if (g->emit(g->emit_ctx, EV_DEAL_SCORED, a, k)) return -1;
    }
    if (g->score_cappotto >= 0) {
        g->winner = g->score_cappotto;
        g->cappotto = 1;
    } else {
        int w = unique_top(g->totals, g->sides);
        if (w >= 0 && g->totals[w] >= g->o.target) g->winner = w;
    }
    if (g->winner >= 0) {
        g->deal_over = 1;
        if (g->emit) {
            long long a[3 + MAX_PLAYERS];
            int k = 0;
            a[k++] = g->winner;
            a[k++] = g->cappotto;
            a[k++] = g->sides;
            for (int i = 0; i < g->sides; i++) a[k++] = g->totals[i];
            if (g->emit(g->emit_ctx, EV_GAME_OVER, a, k)) return -1;
        }
    } else if (g->deal_only) {
        g->deal_over = 1;
    } else {
        return g_start_deal(g);
    }
    return 0;
}

/* g_deal_round without its events: the random loops' round, inline */
static inline __attribute__((always_inline)) void g_deal_cards(G *g) {
    int n = g->n, top = g->nstock - 1;
    /* card k of the round (the stock's top first) to seat (dealer + 1 + k) % n */
    for (int j = 0, seat = g->dealer; j < n; j++) {
        seat = seat + 1 < n ? seat + 1 : 0;
        const uint8_t *from = g->stock + top - j;
        g->hands[seat] |= 1ULL << from[0] | 1ULL << from[-n] | 1ULL << from[-2 * n];
    }
    g->nstock -= 3 * n;
    g->in_hands = 3 * n;
    g->round++;
}

__attribute__((noinline)) static int g_deal_round(G *g) { /* Game._deal_round */
    int n = g->n;
    g_deal_cards(g);
    EMIT(g, EV_ROUND_DEALT, g->round, n, g->nstock);
    if (g->emit && emit_hands(g, g->round)) return -1;
    return 0;
}

static inline int ace_on_table(u64 table, int wild) {
    return (table & ACES) || (wild == 1 && (table >> WILD & 1));
}

/* Game._play up to the round's end (g_play_body): an action code from legal_codes,
   unchecked; events only when ``events`` (a constant where it is inlined: the loops without
   events skip building them). */
static inline __attribute__((always_inline)) int g_play_card(G *g, u64 code, int events) {
    int seat = g->turn, side = g->side_of[seat];
    int card = (int)(code & 63);
    u64 capture = code >> 12;
    if (code & 0xFC0) {
        int decl = (int)(code >> 6 & 63);
        if (decl & 15) g->wild = decl & 15;
        int points = decl >> 4 == 2 ? 10 : 3;
        g->scope[side] += points;
        g->declared[seat] = g->hands[seat];
        if (events)
            EMIT(g, EV_DECLARED, seat, side, decl >> 4, (long long)g->hands[seat], decl & 15,
                 points);
    }
    u64 bit = 1ULL << card;
    g->hands[seat] ^= bit;
    g->declared[seat] &= ~bit;
    int in_hands = --g->in_hands;
    u64 table = g->table;
    /* a capture takes its cards off the table, else the card joins it (without a branch:
       which card captures is as random as the game) */
    u64 after = capture ? table ^ capture : table | bit;
    g->table = after;
    g->captured[side] |= capture ? capture | bit : 0;
    g->last_taker = capture ? side : g->last_taker;
    int scopa = 0, sweep = 0;
    if (!after) { /* the whole table taken (a capture alone empties it) */
        sweep = (card == WILD && g->wild ? g->wild : card_value(card)) == 1 &&
                !ace_on_table(table, g->wild);
        if (in_hands || g->nstock) {
            scopa = !sweep || g->o.ace_sweep_scopa;
            g->scope[side] += scopa;
        }
    }
    if (events)
        EMIT(g, EV_CARD_PLAYED, seat, side, card,
             card == WILD && g->wild ? g->wild : card_value(card), (long long)capture, scopa,
             sweep);
    g->turn = seat + 1 < g->n ? seat + 1 : 0;
    return 0;
}

/* g_play_card, then the round's end: the next round dealt or the deal's end */
static inline __attribute__((always_inline)) int g_play_body(G *g, u64 code, int events) {
    if (g_play_card(g, code, events)) return -1;
    if (!g->in_hands && !g->pause_at_round_end) return g->nstock ? g_deal_round(g) : g_end_deal(g);
    return 0;
}

__attribute__((noinline)) static int g_play_events(G *g, u64 code) {
    return g_play_body(g, code, 1);
}

static int g_play(G *g, u64 code) {
    return g->emit ? g_play_events(g, code) : g_play_body(g, code, 0);
}

/* ------------------------------------------------------------------ views and worlds (views.py) */

typedef struct {
    int seat, deal, dealer, round, to_move, wild, stock, last_taker;
    u64 hand, table;
    int hand_sizes[MAX_PLAYERS];
    u64 declared[MAX_PLAYERS], captured[MAX_PLAYERS];
    int scope[MAX_PLAYERS], totals[MAX_PLAYERS];
} ViewIn;

typedef struct {
    G base;       /* every public zone filled in, hidden hands holding only declared cards */
    uint8_t unseen[NUM_CARDS];
    int nunseen;
    int need[MAX_PLAYERS];
} World;

static const char *world_init(World *w, const Opts *o, const ViewIn *v) {
    G *g = &w->base;
    g_init(g, o);
    u64 known = v->hand | v->table;
    for (int s = 0; s < g->n; s++) known |= v->declared[s];
    for (int s = 0; s < g->sides; s++) known |= v->captured[s];
    int cards[NUM_CARDS];
    w->nunseen = cards_of(ALL_CARDS & ~known, cards);
    for (int i = 0; i < w->nunseen; i++) w->unseen[i] = (uint8_t)cards[i];
    int total = 0;
    for (int s = 0; s < g->n; s++) {
        g->hands[s] = s == v->seat ? v->hand : v->declared[s];
        g->declared[s] = v->declared[s];
        w->need[s] = s == v->seat ? 0 : v->hand_sizes[s] - popc(v->declared[s]);
        if (w->need[s] < 0) return "a declared hand is larger than its hand size";
        total += w->need[s];
    }
    if (total + v->stock != w->nunseen)
        return "view is inconsistent: unseen cards do not fill the hidden hands and the stock";
    if (v->stock % (3 * g->n)) return "view is inconsistent: the stock must deal whole rounds";
    for (int s = 0; s < g->sides; s++) {
        g->captured[s] = v->captured[s];
        g->scope[s] = v->scope[s];
        g->totals[s] = v->totals[s];
    }
    g->table = v->table;
    g->dealer = v->dealer;
    g->deal_no = v->deal;
    g->round = v->round;
    g->turn = v->to_move >= 0 ? v->to_move : v->seat;
    g->wild = v->wild;
    g->last_taker = v->last_taker;
    g->deal_only = 1;
    g->nstock = v->stock;
    g->in_hands = 0;
    for (int s = 0; s < g->n; s++) g->in_hands += v->hand_sizes[s];
    return NULL;
}

/* Deal a shuffled pool of unseen cards: the hands that still need cards (all but
   ``skip``'s, -1 for none) in seat order, then the stock. */
static inline void deal_pool(const World *w, G *g, const uint8_t *pool, int skip) {
    int at = 0;
    for (int s = 0; s < g->n; s++)
        if (s != skip)
            for (int k = 0; k < w->need[s]; k++) g->hands[s] |= 1ULL << pool[at++];
    for (int j = 0; j < g->nstock; j++) g->stock[j] = pool[at + j];
}

/* sample_world: the unseen cards dealt at random into the hidden hands and the stock. */
static void world_sample(const World *w, G *g, Rng *r) {
    uint8_t pool[NUM_CARDS];
    memcpy(g, &w->base, sizeof *g);
    memcpy(pool, w->unseen, (size_t)w->nunseen);
    shuffle(pool, w->nunseen, r);
    deal_pool(w, g, pool, -1);
}

/* ================================================================== Python bindings */

static int parse_opts(PyObject *obj, Opts *o) {
    int v[9];
    PyObject *seq = PySequence_Fast(obj, "options must be a tuple of 9 ints");
    if (!seq) return -1;
    if (PySequence_Fast_GET_SIZE(seq) != 9) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "options must be a tuple of 9 ints");
        return -1;
    }
    for (int i = 0; i < 9; i++) {
        v[i] = (int)PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (v[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
    }
    Py_DECREF(seq);
    o->players = v[0];
    o->target = v[1];
    o->must_capture = v[2];
    o->pairing_precedence = v[3];
    o->ace_sweep_scopa = v[4];
    o->dealer_low_bonus = v[5];
    o->primiera_needs_all_suits = v[6];
    o->piccola_max = v[7];
    o->cappotto = v[8];
    if (o->players < 2 || o->players > 4) {
        PyErr_SetString(PyExc_ValueError, "options: players must be 2, 3 or 4");
        return -1;
    }
    return 0;
}

static int get_mask(PyObject *obj, u64 *out) {
    unsigned long long m = PyLong_AsUnsignedLongLong(obj);
    if (m == (unsigned long long)-1 && PyErr_Occurred()) return -1;
    if (m >> NUM_CARDS) {
        PyErr_SetString(PyExc_ValueError, "card mask has bits beyond 40 cards");
        return -1;
    }
    *out = m;
    return 0;
}

/* a sequence of exactly n ints (masks when ``masks``) */
static int get_ints(PyObject *obj, int n, long long *out, int masks, const char *what) {
    PyObject *seq = PySequence_Fast(obj, what);
    if (!seq) return -1;
    if (PySequence_Fast_GET_SIZE(seq) != n) {
        PyErr_Format(PyExc_ValueError, "%s: expected %d values", what, n);
        Py_DECREF(seq);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (masks) {
            u64 m;
            if (get_mask(item, &m)) {
                Py_DECREF(seq);
                return -1;
            }
            out[i] = (long long)m;
        } else {
            out[i] = PyLong_AsLongLong(item);
            if (out[i] == -1 && PyErr_Occurred()) {
                Py_DECREF(seq);
                return -1;
            }
        }
    }
    Py_DECREF(seq);
    return 0;
}

static PyObject *codes_list(const Scratch *s) {
    PyObject *list = PyList_New(s->ncodes);
    if (!list) return NULL;
    for (int i = 0; i < s->ncodes; i++) {
        PyObject *x = PyLong_FromUnsignedLongLong(s->codes[i]);
        if (!x) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, x);
    }
    return list;
}

static int parse_view(PyObject *obj, const Opts *o, ViewIn *v) {
    /* (seat, deal, dealer, round, to_move, hand, table, wild, hand_sizes, declared,
        captured, scope, stock, totals, last_taker); to_move / last_taker -1 = None */
    PyObject *hs, *decl, *cap, *scope, *totals;
    unsigned long long hand, table;
    if (!PyArg_ParseTuple(obj, "iiiiiKKiOOOOiOi", &v->seat, &v->deal, &v->dealer, &v->round,
                          &v->to_move, &hand, &table, &v->wild, &hs, &decl, &cap, &scope,
                          &v->stock, &totals, &v->last_taker))
        return -1;
    int n = o->players, sides = n == 4 ? 2 : n;
    long long a[MAX_PLAYERS];
    if (v->seat < 0 || v->seat >= n) {
        PyErr_SetString(PyExc_ValueError, "view: seat out of range");
        return -1;
    }
    v->hand = hand;
    v->table = table;
    if (get_ints(hs, n, a, 0, "view.hand_sizes")) return -1;
    for (int i = 0; i < n; i++) v->hand_sizes[i] = (int)a[i];
    if (get_ints(decl, n, a, 1, "view.declared")) return -1;
    for (int i = 0; i < n; i++) v->declared[i] = (u64)a[i];
    if (get_ints(cap, sides, a, 1, "view.captured")) return -1;
    for (int i = 0; i < sides; i++) v->captured[i] = (u64)a[i];
    if (get_ints(scope, sides, a, 0, "view.scope")) return -1;
    for (int i = 0; i < sides; i++) v->scope[i] = (int)a[i];
    if (get_ints(totals, sides, a, 0, "view.totals")) return -1;
    for (int i = 0; i < sides; i++) v->totals[i] = (int)a[i];
    if ((hand | table) >> NUM_CARDS || v->stock < 0 || v->wild < 0 || v->wild > 10) {
        PyErr_SetString(PyExc_ValueError, "view: bad masks, stock or wild value");
        return -1;
    }
    if (v->dealer < 0 || v->dealer >= n || v->to_move < -1 || v->to_move >= n ||
        v->last_taker < -1 || v->last_taker >= sides) {
        PyErr_SetString(PyExc_ValueError, "view: dealer, to_move or last_taker out of range");
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (v->hand_sizes[i] < 0 || v->hand_sizes[i] > 3) {
            PyErr_SetString(PyExc_ValueError, "view: hand sizes are 0..3");
            return -1;
        }
    if (popc(v->hand) != v->hand_sizes[v->seat]) {
        PyErr_SetString(PyExc_ValueError, "view: the hand does not match its hand size");
        return -1;
    }
    return 0;
}

/* The zones a sampled world dealt: (hands tuple, stock list in dealing order). */
static PyObject *zones_tuple(const G *g) {
    PyObject *hands = PyTuple_New(g->n), *stock = PyList_New(g->nstock);
    if (!hands || !stock) {
        Py_XDECREF(hands);
        Py_XDECREF(stock);
        return NULL;
    }
    for (int s = 0; s < g->n; s++)
        PyTuple_SET_ITEM(hands, s, PyLong_FromUnsignedLongLong(g->hands[s]));
    for (int j = 0; j < g->nstock; j++)
        PyList_SET_ITEM(stock, j, PyLong_FromLong(g->stock[g->nstock - 1 - j]));
    return Py_BuildValue("(NN)", hands, stock);
}

/* A deck source for g->deck: shuffled by the Rng in ctx. */
static int rng_deck(void *ctx, int deal_no, uint8_t *deck) {
    static const uint8_t ordered[NUM_CARDS] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,
                                               10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
                                               20, 21, 22, 23, 24, 25, 26, 27, 28, 29,
                                               30, 31, 32, 33, 34, 35, 36, 37, 38, 39};
    (void)deal_no;
    memcpy(deck, ordered, NUM_CARDS);
    shuffle(deck, NUM_CARDS, (Rng *)ctx);
    return 0;
}

/* Clocks of the search budgets and the benchmarks. */
static double now_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_seconds(void) { /* this thread's CPU time: one core's work, however busy */
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif /* CIRULLA_RULES_ENGINE_H */

/*
 * cirulla.rules._native: the compiled rules core as a Python module, for the rules core's
 * Python side (cirulla.rules.core) and its benchmark. The state machine is engine.h; the
 * bots' search is on the bots' floor (bots/cirulla/bots/_search.c), built on the same
 * header.
 */
#include "engine.h"
#include <structmember.h>

/* The growable buffers of the module's legal-action functions, kept between calls (they
   hold the GIL and call no Python meanwhile): allocating them at every call cost more
   than computing the answer. */
static Scratch shared_scratch;

/* ------------------------------------------------------------------ seeded decks (decks.py) */

/* decks.seeded_deck in C, bit for bit: SHA-256 of "cirulla-deck/1:{seed}:{number}", the
   digest as a big-endian integer seeding CPython's random.Random (MT19937 through
   init_by_array over the integer's 32-bit words, least significant first), 40 random()
   keys (genrand_res53) and range(40) sorted stably by them. */

/* The deck code is compiled for more than the baseline x86-64 where GCC targets x86-64:
   the MT19937 seeding and the keys' order for AVX2 (eight 32-bit lanes, their multiply and
   64-bit compares one instruction each, which SSE2 emulates), SHA-256 for the processor's
   SHA extensions; the processor the module loads on picks what it runs (deck_isa), so a
   wheel stays portable. Every choice gives the same decks (tests: the processor's and the
   baseline both run). */
#if defined(__GNUC__) && !defined(__clang__)
#define DECK_INLINE static inline __attribute__((always_inline))
#define DECK_FAST __attribute__((optimize("O3")))
#else
#define DECK_INLINE static inline
#define DECK_FAST
#endif
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
#define DECK_AVX2 1
#endif
enum { ISA_BASELINE = 0, ISA_AVX2 = 1, ISA_SHA = 2 }; /* flags */
static const char *const ISA_NAMES[] = {"baseline", "avx2", "sha", "avx2+sha"};
static int deck_isa = ISA_BASELINE; /* the best this processor has (module init) */

static const uint32_t SHA_K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

#define ROR32(x, n) ((x) >> (n) | (x) << (32 - (n)))

static void sha256_block(uint32_t *h, const uint8_t *p) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR32(w[i - 15], 7) ^ ROR32(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR32(w[i - 2], 17) ^ ROR32(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = k + (ROR32(e, 6) ^ ROR32(e, 11) ^ ROR32(e, 25)) + ((e & f) ^ (~e & g)) +
                      SHA_K[i] + w[i];
        uint32_t t2 = (ROR32(a, 2) ^ ROR32(a, 13) ^ ROR32(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
}

#ifdef DECK_AVX2
#include <cpuid.h>
#include <immintrin.h>
/* sha256_block with the SHA extensions (the usual two rounds an instruction; the state
   kept as ABEF and CDGH, as they want it) */
__attribute__((target("sha,sse4.1"))) static void sha256_block_sha(uint32_t *h,
                                                                    const uint8_t *p) {
    const __m128i swap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i t = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[0]), 0xB1); /* CDAB */
    __m128i s1 = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)&h[4]), 0x1B); /* EFGH */
    __m128i s0 = _mm_alignr_epi8(t, s1, 8);                                       /* ABEF */
    s1 = _mm_blend_epi16(s1, t, 0xF0);                                             /* CDGH */
    const __m128i abef = s0, cdgh = s1;
    __m128i w[4];
    for (int i = 0; i < 16; i++) { /* four rounds each; w[i & 3] held words 4(i-4).. */
        __m128i m;
        if (i < 4)
            m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16 * i)), swap);
        else
            m = _mm_sha256msg2_epu32(
                _mm_add_epi32(_mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]),
                              _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4)),
                w[(i + 3) & 3]);
        w[i & 3] = m;
        __m128i km = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)&SHA_K[4 * i]));
        s1 = _mm_sha256rnds2_epu32(s1, s0, km);
        s0 = _mm_sha256rnds2_epu32(s0, s1, _mm_shuffle_epi32(km, 0x0E));
    }
    s0 = _mm_add_epi32(s0, abef);
    s1 = _mm_add_epi32(s1, cdgh);
    t = _mm_shuffle_epi32(s0, 0x1B);  /* FEBA */
    s1 = _mm_shuffle_epi32(s1, 0xB1); /* DCHG */
    _mm_storeu_si128((__m128i *)&h[0], _mm_blend_epi16(t, s1, 0xF0)); /* DCBA */
    _mm_storeu_si128((__m128i *)&h[4], _mm_alignr_epi8(s1, t, 8));    /* HGFE */
}

/* whether the processor has the SHA extensions (with the SSE4.1 they need) */
static int has_sha(void) {
    unsigned a, b, c, d;
    return __builtin_cpu_supports("sse4.1") && __get_cpuid_count(7, 0, &a, &b, &c, &d) &&
           (b & bit_SHA);
}
#endif

static void sha256(const uint8_t *msg, size_t len, uint8_t out[32], int isa) {
    uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    void (*block)(uint32_t *, const uint8_t *) = sha256_block;
#ifdef DECK_AVX2
    if (isa & ISA_SHA) block = sha256_block_sha;
#endif
    (void)isa;
    size_t i = 0;
    for (; i + 64 <= len; i += 64) block(h, msg + i);
    uint8_t tail[128] = {0};
    size_t rest = len - i, end = rest + 9 <= 64 ? 64 : 128;
    memcpy(tail, msg + i, rest);
    tail[rest] = 0x80;
    for (int k = 0; k < 8; k++) tail[end - 1 - k] = (uint8_t)((u64)len * 8 >> 8 * k);
    block(h, tail);
    if (end == 128) block(h, tail + 64);
    for (int k = 0; k < 8; k++)
        for (int b = 0; b < 4; b++) out[4 * k + b] = (uint8_t)(h[k] >> (24 - 8 * b));
}

#define MT_N 624
#define MT_M 397

/* CPython's init_genrand(19650218), the state init_by_array starts from (computed once) */
static uint32_t mt_base[MT_N];

static void mt_base_init(void) {
    mt_base[0] = 19650218U;
    for (uint32_t i = 1; i < MT_N; i++)
        mt_base[i] = 1812433253U * (mt_base[i - 1] ^ (mt_base[i - 1] >> 30)) + i;
}

/* random.Random(int)'s state for the key words (init_by_array, _randommodule.c): here only
   for the digests with a leading zero word (one in 2**32), mt_init_lanes doing the rest */
static void mt_init_by_array(uint32_t *mt, const uint32_t *key, size_t nkey) {
    size_t i = 1, j = 0;
    memcpy(mt, mt_base, sizeof mt_base);
    for (size_t k = MT_N > nkey ? MT_N : nkey; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1664525U)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
        if (j >= nkey) j = 0;
    }
    for (size_t k = MT_N - 1; k; k--) {
        mt[i] = (mt[i] ^ ((mt[i - 1] ^ (mt[i - 1] >> 30)) * 1566083941U)) - (uint32_t)i;
        i++;
        if (i >= MT_N) {
            mt[0] = mt[MT_N - 1];
            i = 1;
        }
    }
    mt[0] = 0x80000000U;
}

/* output kk (< MT_N - MT_M) of the first twist, tempered: the first outputs of a freshly
   seeded generator need only the untwisted words kk, kk + 1 and kk + MT_M (branch-free, so
   that a loop of them vectorizes) */
static inline uint32_t mt_first(const uint32_t *mt, int kk) {
    uint32_t y = (mt[kk] & 0x80000000U) | (mt[kk + 1] & 0x7fffffffU);
    y = mt[kk + MT_M] ^ (y >> 1) ^ (0U - (y & 1U) & 0x9908b0dfU);
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680U;
    y ^= (y << 15) & 0xefc60000U;
    return y ^ (y >> 18);
}

/* ``prefix`` and v in decimal at out (room for 22 bytes past the prefix); the length */
static int decimal(const char *prefix, long long v, char *out) {
    char digits[24];
    int n = 0, len = 0;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    while (*prefix) out[len++] = *prefix++;
    if (v < 0) out[len++] = '-';
    do digits[n++] = (char)('0' + u % 10); while (u /= 10);
    while (n) out[len++] = digits[--n];
    return len;
}

/* The key words of deck ``number`` of a seed given as its decimal text (SHA-256 of
   "cirulla-deck/1:SEED:NUMBER", as an integer in 32-bit words from the least significant,
   leading zero words dropped: random.seed uses the integer's bit length); their count, or
   -1 when out of memory (a seed of hundreds of digits) */
static int deck_key(const char *seed_text, size_t seed_len, long long number, int isa,
                    uint32_t *key) {
    static const char head[] = "cirulla-deck/1:";
    char buf[256], *msg = buf;
    size_t need = seed_len + 48, len = sizeof head - 1;
    if (need > sizeof buf && !(msg = malloc(need))) return -1;
    uint8_t digest[32];
    memcpy(msg, head, len);
    memcpy(msg + len, seed_text, seed_len);
    len += seed_len;
    len += (size_t)decimal(":", number, msg + len);
    sha256((const uint8_t *)msg, len, digest, isa);
    if (msg != buf) free(msg);
    int nkey = 0;
    for (int w = 0; w < 8; w++) {
        const uint8_t *p = digest + 28 - 4 * w;
        key[w] = (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
        if (key[w]) nkey = w + 1;
    }
    return nkey ? nkey : 1;
}

/* the deck a freshly seeded generator's state gives: random() is (a * 2**26 + b) / 2**53,
   so the keys compare as the 53-bit integers; each card's below its key, so equal keys
   keep the cards' order, as sorted() does. The keys are then all different, so a card's
   place is also the number of keys below its own: with ``by_count``, forty by forty
   comparisons without a branch, which AVX2 runs four at a time (without it, the insertion
   sort is faster). */
DECK_INLINE void deck_of_state(const uint32_t *mt, uint8_t *deck, int by_count) {
    uint32_t out[2 * NUM_CARDS];
    int64_t keys[NUM_CARDS]; /* below 2**59: compared as signed, as SIMD compares */
    for (int kk = 0; kk < 2 * NUM_CARDS; kk++) out[kk] = mt_first(mt, kk);
    for (int c = 0; c < NUM_CARDS; c++)
        keys[c] = (int64_t)(((u64)(out[2 * c] >> 5) << 26 | out[2 * c + 1] >> 6) << 6 | (u64)c);
    if (by_count) {
        for (int c = 0; c < NUM_CARDS; c++) {
            int64_t k = keys[c];
            int place = 0;
            for (int j = 0; j < NUM_CARDS; j++) place += keys[j] < k;
            deck[place] = (uint8_t)c;
        }
        return;
    }
    for (int i = 1; i < NUM_CARDS; i++) {
        int64_t k = keys[i];
        int j = i;
        for (; j > 0 && keys[j - 1] > k; j--) keys[j] = keys[j - 1];
        keys[j] = k;
    }
    for (int i = 0; i < NUM_CARDS; i++) deck[i] = (uint8_t)(keys[i] & 63);
}

/* mt_init_by_array's 8-word case for DECK_LANES keys at once, the states interleaved
   (mt[i][lane]): one key's steps are a chain, each waiting on the last, so alone they keep
   the processor mostly idle; side by side they run in parallel (several times the decks
   per second). Only the words deck_of_state reads are kept, in ``out``. */
#define DECK_LANES 8
typedef uint32_t lanes_u32 __attribute__((vector_size(4 * DECK_LANES)));
DECK_INLINE void mt_init_lanes(const uint32_t key[DECK_LANES][8], uint32_t out[DECK_LANES][MT_N],
                              int by_vector) {
    lanes_u32 mt[MT_N], add[8], prev = (lanes_u32){0} + mt_base[0];
    for (int w = 0; w < 8; w++)
        for (int l = 0; l < DECK_LANES; l++) add[w][l] = key[l][w] + (uint32_t)w;
    for (int i = 1; i < MT_N; i++)
        mt[i] = prev = (mt_base[i] ^ ((prev ^ (prev >> 30)) * 1664525U)) + add[(i - 1) & 7];
    mt[0] = prev;
    mt[1] = prev = (mt[1] ^ ((prev ^ (prev >> 30)) * 1664525U)) + add[7];
    if (by_vector)
        for (int i = 2; i < MT_N; i++)
            mt[i] = prev = (mt[i] ^ ((prev ^ (prev >> 30)) * 1566083941U)) - (uint32_t)i;
    else /* SSE2 has no 32-bit multiply: eight scalar chains run faster than its emulation */
        for (int i = 2; i < MT_N; i++)
            for (int l = 0; l < DECK_LANES; l++) {
                uint32_t p = prev[l];
                mt[i][l] = prev[l] = (mt[i][l] ^ ((p ^ (p >> 30)) * 1566083941U)) - (uint32_t)i;
            }
    mt[1] = (mt[1] ^ ((prev ^ (prev >> 30)) * 1566083941U)) - 1U;
    mt[0] = (lanes_u32){0} + 0x80000000U;
    for (int l = 0; l < DECK_LANES; l++) /* the words mt_first reads for 80 outputs */
        for (int i = 0; i <= 2 * NUM_CARDS; i++) {
            out[l][i] = mt[i][l];
            out[l][i + MT_M] = mt[i + MT_M][l];
        }
}

/* the decks of DECK_LANES keys (the first ``count`` used; nkey: each key's length) */
DECK_INLINE void decks_of_keys(const uint32_t key[DECK_LANES][8], const int *nkey, int count,
                               uint8_t (*decks)[NUM_CARDS], int by_count) {
    uint32_t mt[DECK_LANES][MT_N];
    mt_init_lanes(key, mt, by_count);
    for (int l = 0; l < count; l++) {
        if (nkey[l] != 8) /* a digest with a leading zero word (one in 2**32): the long way */
            mt_init_by_array(mt[l], key[l], (size_t)nkey[l]);
        deck_of_state(mt[l], decks[l], by_count);
    }
}

DECK_FAST static void decks_of_keys_baseline(const uint32_t key[DECK_LANES][8], const int *nkey,
                                             int count, uint8_t (*decks)[NUM_CARDS]) {
    decks_of_keys(key, nkey, count, decks, 0);
}

#ifdef DECK_AVX2
DECK_FAST __attribute__((target("avx2"))) static void decks_of_keys_avx2(
    const uint32_t key[DECK_LANES][8], const int *nkey, int count, uint8_t (*decks)[NUM_CARDS]) {
    decks_of_keys(key, nkey, count, decks, 1);
}
#endif

/* decks first .. first + count - 1 (count <= DECK_LANES) of a seed given as its decimal
   text, as decks.seeded_deck gives each, computed with ``isa``; -1 when out of memory */
static int seeded_decks_c(const char *seed_text, size_t seed_len, long long first, int count,
                          int isa, uint8_t (*decks)[NUM_CARDS]) {
    uint32_t key[DECK_LANES][8];
    int nkey[DECK_LANES];
    for (int l = 0; l < DECK_LANES; l++) {
        if (l >= count) { /* an idle lane: any key */
            memcpy(key[l], key[0], sizeof key[l]);
            nkey[l] = 8;
            continue;
        }
        if ((nkey[l] = deck_key(seed_text, seed_len, first + l, isa, key[l])) < 0) return -1;
    }
#ifdef DECK_AVX2
    if (isa & ISA_AVX2) {
        decks_of_keys_avx2((const uint32_t(*)[8])key, nkey, count, decks);
        return 0;
    }
#endif
    (void)isa;
    decks_of_keys_baseline((const uint32_t(*)[8])key, nkey, count, decks);
    return 0;
}

/* ------------------------------------------------------------------ random-play benchmark */

/* A new game of the benchmark's random play (bench_loop and digest_loop play the same ones):
   its decks drawn from ``deck_rng``, its first deal dealt. */
static inline void bench_new_game(G *g, const Opts *o, Rng *deck_rng) {
    g_init(g, o);
    g->deck = rng_deck;
    g->deck_ctx = deck_rng;
    g->dealer = o->players - 2;
    g_start_deal(g);
}

/* One random pick for the seat to move, whose hand holds ``size`` cards: from the whole list
   of legal codes (``listed``) or built alone from their count (random_code); the same code
   either way. Its number of legal codes, or -1 (no memory). */
static inline __attribute__((always_inline)) int bench_pick(Scratch *s, const G *g, int must,
                                                            int pp, int size, int listed,
                                                            Rng *rng, u64 *code) {
    return listed ? random_code_listed(s, g->table, g->hands[g->turn], g->wild, must, pp, rng, code)
                  : random_code(s, g->table, g->hands[g->turn], g->wild, must, pp, size, rng, code);
}

/* rules/cirulla/rules/bench.py:bench_rules, the whole loop in C, for ``seconds`` of CPU time;
   must and pp (the options' must_capture and pairing_precedence) are constants where it is
   inlined (bench_run: one loop per pair). */
static inline __attribute__((always_inline)) int bench_loop(const Opts *o, double seconds, u64 seed,
                                                            long long *deals, long long *games,
                                                            long long *actions, double *elapsed,
                                                            double *cpu, int must, int pp,
                                                            int listed) {
    Rng rng = {seed}, deck_rng = {seed ^ 0x5bd1e995ULL};
    Scratch s = {0};
    G g;
    int rc = 0;
    long long n_deals = 0, n_games = 0, n_actions = 0;
    double start = now_seconds(), cpu_start = cpu_seconds(), deadline = cpu_start + seconds;
    bench_new_game(&g, o, &deck_rng);
    for (;;) {
        int deal_no = g.deal_no;
        while (g.deal_no == deal_no && g.winner < 0) {
            /* a round: each seat's hand of 3 cards, then of 2, then of 1 (random_code told) */
#define BENCH_TURNS(size)                                                                 \
    for (int k = 0; k < g.n; k++) {                                                       \
        u64 code;                                                                         \
        if (bench_pick(&s, &g, must, pp, size, listed, &rng, &code) < 0) {                \
            rc = -1;                                                                      \
            goto out;                                                                     \
        }                                                                                 \
        g_play_card(&g, code, 0); /* no events */                                         \
    }
            BENCH_TURNS(3)
            BENCH_TURNS(2)
            BENCH_TURNS(1)
#undef BENCH_TURNS
            n_actions += 3 * g.n;
            if (g.nstock) { /* the round's end: the next round (no events), or the deal's end */
                g_deal_cards(&g);
            } else if (g_end_deal(&g)) {
                rc = -1;
                goto out;
            }
        }
        n_deals++;
        if (g.winner >= 0) {
            n_games++;
            bench_new_game(&g, o, &deck_rng);
        }
        if (n_deals % 64 == 0 && cpu_seconds() >= deadline) break;
    }
out:
    *elapsed = now_seconds() - start;
    *cpu = cpu_seconds() - cpu_start;
    *deals = n_deals;
    *games = n_games;
    *actions = n_actions;
    scratch_free(&s);
    return rc;
}

/* ``listed``: every pick through the whole list of legal codes (random_code_listed: the
   table's sums, legal_codes, an index), what a caller that looks at every legal action
   pays (a policy, a search); otherwise random_code counts the codes and builds the one
   drawn. The same code either way, so the same games. */
static int bench_run(const Opts *o, double seconds, u64 seed, long long *deals, long long *games,
                     long long *actions, double *elapsed, double *cpu, int listed) {
    int must = o->must_capture != 0, pp = o->pairing_precedence != 0;
    if (listed)
        return bench_loop(o, seconds, seed, deals, games, actions, elapsed, cpu, must, pp, 1);
    if (must && !pp)
        return bench_loop(o, seconds, seed, deals, games, actions, elapsed, cpu, 1, 0, 0);
    if (must) return bench_loop(o, seconds, seed, deals, games, actions, elapsed, cpu, 1, 1, 0);
    if (!pp) return bench_loop(o, seconds, seed, deals, games, actions, elapsed, cpu, 0, 0, 0);
    return bench_loop(o, seconds, seed, deals, games, actions, elapsed, cpu, 0, 1, 0);
}

/* FNV-1a over 64-bit words: the fingerprint of a run of random games (never inlined, so that
   callgrind counts it apart from the loop it fingerprints: docs/performance.md) */
__attribute__((noinline)) static u64 fnv_mix(u64 h, u64 x) {
    for (int i = 0; i < 8; i++) {
        h ^= (x >> (8 * i)) & 0xff;
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* bench_run's loop for a fixed number of deals, fingerprinting every action code and every
   deal's totals: the benchmark's games, so a faster core can show it plays the same ones. */
static inline __attribute__((always_inline)) int digest_loop(const Opts *o, long long ndeals,
                                                             u64 seed, u64 *digest,
                                                             long long *actions, int must, int pp,
                                                             int listed) {
    Rng rng = {seed}, deck_rng = {seed ^ 0x5bd1e995ULL};
    Scratch s = {0};
    G g;
    u64 h = 0xcbf29ce484222325ULL;
    long long n_actions = 0;
    bench_new_game(&g, o, &deck_rng);
    for (long long d = 0; d < ndeals; d++) {
        int deal_no = g.deal_no;
        while (g.deal_no == deal_no && g.winner < 0) {
            /* a round, as bench_loop plays it */
#define DIGEST_TURNS(size)                                                                \
    for (int k = 0; k < g.n; k++) {                                                       \
        u64 code;                                                                         \
        int ncodes = bench_pick(&s, &g, must, pp, size, listed, &rng, &code);             \
        if (ncodes < 0) {                                                                 \
            scratch_free(&s);                                                             \
            return -1;                                                                    \
        }                                                                                 \
        h = fnv_mix(h, code);                                                             \
        h = fnv_mix(h, (u64)ncodes);                                                      \
        g_play_card(&g, code, 0); /* no events */                                         \
    }
            DIGEST_TURNS(3)
            DIGEST_TURNS(2)
            DIGEST_TURNS(1)
#undef DIGEST_TURNS
            n_actions += 3 * g.n;
            if (g.nstock) { /* the round's end, as bench_loop plays it */
                g_deal_cards(&g);
            } else if (g_end_deal(&g)) {
                scratch_free(&s);
                return -1;
            }
        }
        for (int i = 0; i < g.sides; i++) h = fnv_mix(h, (u64)(uint32_t)g.totals[i]);
        if (g.winner >= 0) {
            h = fnv_mix(h, (u64)g.winner);
            bench_new_game(&g, o, &deck_rng);
        }
    }
    scratch_free(&s);
    *digest = h;
    *actions = n_actions;
    return 0;
}

static int digest_run(const Opts *o, long long ndeals, u64 seed, u64 *digest,
                      long long *actions, int listed) {
    int must = o->must_capture != 0, pp = o->pairing_precedence != 0;
    if (listed) return digest_loop(o, ndeals, seed, digest, actions, must, pp, 1);
    if (must && !pp) return digest_loop(o, ndeals, seed, digest, actions, 1, 0, 0);
    if (must) return digest_loop(o, ndeals, seed, digest, actions, 1, 1, 0);
    if (!pp) return digest_loop(o, ndeals, seed, digest, actions, 0, 0, 0);
    return digest_loop(o, ndeals, seed, digest, actions, 0, 1, 0);
}

PyDoc_STRVAR(random_deals_digest_doc,
             "random_deals_digest(options, deals, seed, listed=False) -> (digest, actions)\n\n"
             "bench_rules's random-play loop for ``deals`` deals: a fingerprint (FNV-1a) of every "
             "action code, the number of legal actions at each step, and every deal's totals; "
             "``listed`` picks from the whole list of legal codes (the same games).");

static PyObject *py_random_deals_digest(PyObject *self, PyObject *args) {
    PyObject *opts_obj;
    long long deals, actions;
    unsigned long long seed;
    u64 digest;
    Opts o;
    int listed = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OLK|p", &opts_obj, &deals, &seed, &listed)) return NULL;
    if (parse_opts(opts_obj, &o)) return NULL;
    if (digest_run(&o, deals, seed, &digest, &actions, listed)) return PyErr_NoMemory();
    return Py_BuildValue("(KL)", (unsigned long long)digest, actions);
}

PyDoc_STRVAR(legal_codes_doc,
             "legal_codes(hand, table, wild, must_capture, pairing_precedence) -> list\n\n"
             "Game.legal_codes for the seat holding ``hand``, in the protocol's order.");

static PyObject *py_legal_codes(PyObject *self, PyObject *args) {
    unsigned long long hand, table;
    int wild, must, pp;
    (void)self;
    if (!PyArg_ParseTuple(args, "KKipp", &hand, &table, &wild, &must, &pp)) return NULL;
    if ((hand | table) >> NUM_CARDS || wild < 0 || wild > 10) {
        PyErr_SetString(PyExc_ValueError, "legal_codes: masks of 40 cards, wild value 0..10");
        return NULL;
    }
    Tab t;
    if (tab_init(&shared_scratch, &t, table, wild) ||
        legal_codes(&shared_scratch, &t, hand, wild, must, pp))
        return PyErr_NoMemory();
    return codes_list(&shared_scratch);
}

PyDoc_STRVAR(captures_doc,
             "captures(table, played_value, wild_value, pairing_precedence) -> tuple\n\n"
             "captures.legal_captures: capture masks, ascending.");

static PyObject *py_captures(PyObject *self, PyObject *args) {
    unsigned long long table;
    int v, wild, pp, len;
    (void)self;
    if (!PyArg_ParseTuple(args, "Kiip", &table, &v, &wild, &pp)) return NULL;
    if (table >> NUM_CARDS || v < 1 || v > 10 || wild < 0 || wild > 10) {
        PyErr_SetString(PyExc_ValueError, "captures: 40-card table, value 1..10, wild 0..10");
        return NULL;
    }
    Scratch s = {0};
    Tab t;
    PyObject *res = NULL;
    const u64 *sets = NULL;
    if (!tab_init(&s, &t, table, wild)) sets = tab_caps(&s, &t, v, pp, &len);
    if (!sets) {
        PyErr_NoMemory();
    } else if ((res = PyTuple_New(len))) {
        for (int i = 0; i < len; i++) {
            PyObject *x = PyLong_FromUnsignedLongLong(sets[i]);
            if (!x) {
                Py_CLEAR(res);
                break;
            }
            PyTuple_SET_ITEM(res, i, x);
        }
    }
    scratch_free(&s);
    return res;
}

static PyObject *py_declaration_codes(PyObject *self, PyObject *arg) {
    u64 hand;
    int codes[10];
    (void)self;
    if (get_mask(arg, &hand)) return NULL;
    int n = decl_codes(hand, codes);
    PyObject *res = PyTuple_New(n);
    if (!res) return NULL;
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(res, i, PyLong_FromLong(codes[i]));
    return res;
}

static PyObject *py_dealer_bonus(PyObject *self, PyObject *args) {
    unsigned long long table;
    int low;
    (void)self;
    if (!PyArg_ParseTuple(args, "Kp", &table, &low)) return NULL;
    return PyLong_FromLong(dealer_bonus(table & ALL_CARDS, low));
}

/* the decimal text of an int seed, as decks.seeded_deck hashes it: written in ``buf`` (32
   bytes) when it fits a long long, else through ``*str`` (the caller's to release) */
static int seed_text(PyObject *seed, char *buf, PyObject **str, const char **text,
                     size_t *len) {
    int overflow;
    long long small = PyLong_AsLongLongAndOverflow(seed, &overflow);
    if (small == -1 && PyErr_Occurred()) return -1;
    *str = NULL;
    if (!overflow) {
        *len = (size_t)decimal("", small, buf);
        *text = buf;
        return 0;
    }
    Py_ssize_t n;
    if (!(*str = PyObject_Str(seed)) || !(*text = PyUnicode_AsUTF8AndSize(*str, &n))) {
        Py_CLEAR(*str);
        return -1;
    }
    *len = (size_t)n;
    return 0;
}

/* seeded_decks_c for an int seed */
static int seeded_decks_of(PyObject *seed, long long first, int count, int isa,
                           uint8_t (*decks)[NUM_CARDS]) {
    char buf[32];
    PyObject *str;
    const char *text;
    size_t len;
    if (seed_text(seed, buf, &str, &text, &len)) return -1;
    int rc = seeded_decks_c(text, len, first, count, isa, decks);
    if (rc) PyErr_NoMemory();
    Py_XDECREF(str);
    return rc;
}

PyDoc_STRVAR(seeded_decks_doc,
             "seeded_decks(seed, first, count, isa=DECK_ISA) -> bytes\n\n"
             "decks.seeded_deck's decks first .. first + count - 1 (count 1 to 8) of ``seed``, "
             "40 bytes each, computed side by side with the instruction sets ``isa`` names "
             "(DECK_ISA: the processor's, such as \"avx2+sha\"; or \"baseline\"): the same "
             "decks.");

static PyObject *py_seeded_decks(PyObject *self, PyObject *args) {
    PyObject *seed;
    long long first;
    int count, isa = deck_isa;
    const char *isa_name = NULL;
    uint8_t decks[DECK_LANES][NUM_CARDS];
    (void)self;
    if (!PyArg_ParseTuple(args, "OLi|s", &seed, &first, &count, &isa_name)) return NULL;
    if (!PyLong_CheckExact(seed) || count < 1 || count > DECK_LANES || first < 1) {
        PyErr_SetString(PyExc_ValueError,
                        "seeded_decks: an int seed, first >= 1 and a count of 1 to 8");
        return NULL;
    }
    if (isa_name) {
        if (strcmp(isa_name, "baseline") == 0) isa = ISA_BASELINE;
        else if (strcmp(isa_name, ISA_NAMES[deck_isa]) != 0)
            return PyErr_Format(PyExc_ValueError,
                                "seeded_decks: isa %s is not one this processor runs (%s, "
                                "baseline)",
                                isa_name, ISA_NAMES[deck_isa]);
    }
    if (seeded_decks_of(seed, first, count, isa, decks)) return NULL;
    return PyBytes_FromStringAndSize((const char *)decks, (Py_ssize_t)count * NUM_CARDS);
}

PyDoc_STRVAR(score_deal_doc,
             "score_deal(options, captured, scope) -> (cappotto, items)\n\n"
             "scoring.score_deal: cappotto side or -1, and per side the 7 items (cards, "
             "coins, settebello, primiera, scope, grande, piccola).");

static PyObject *py_score_deal(PyObject *self, PyObject *args) {
    PyObject *opts_obj, *cap_obj, *scope_obj;
    Opts o;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOO", &opts_obj, &cap_obj, &scope_obj)) return NULL;
    if (parse_opts(opts_obj, &o)) return NULL;
    Py_ssize_t sides = PySequence_Size(cap_obj);
    if (sides < 1 || sides > MAX_PLAYERS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "score_deal: 1..4 sides");
        return NULL;
    }
    long long cap[MAX_PLAYERS], sc[MAX_PLAYERS];
    if (get_ints(cap_obj, (int)sides, cap, 1, "captured") ||
        get_ints(scope_obj, (int)sides, sc, 0, "scope"))
        return NULL;
    u64 captured[MAX_PLAYERS];
    int scope[MAX_PLAYERS], items[MAX_PLAYERS][S_ITEMS];
    for (int i = 0; i < sides; i++) {
        captured[i] = (u64)cap[i];
        scope[i] = (int)sc[i];
    }
    int cappotto = score_deal(&o, (int)sides, captured, scope, items);
    PyObject *per = PyTuple_New(sides);
    if (!per) return NULL;
    for (int i = 0; i < sides; i++)
        PyTuple_SET_ITEM(per, i,
                         Py_BuildValue("(iiiiiii)", items[i][0], items[i][1], items[i][2],
                                       items[i][3], items[i][4], items[i][5], items[i][6]));
    return Py_BuildValue("(iN)", cappotto, per);
}

PyDoc_STRVAR(sample_world_doc,
             "sample_world(options, view, seed) -> (hands, stock)\n\n"
             "views.sample_world's zones: every hand, and the stock in dealing order, dealt "
             "uniformly from what the view does not see (the search's sampler, with evidence, "
             "is cirulla.bots._search.sample_world).");

static PyObject *py_sample_world(PyObject *self, PyObject *args) {
    PyObject *opts_obj, *view_obj;
    unsigned long long seed;
    Opts o;
    ViewIn v;
    World w;
    G g;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOK", &opts_obj, &view_obj, &seed)) return NULL;
    if (parse_opts(opts_obj, &o) || parse_view(view_obj, &o, &v)) return NULL;
    const char *err = world_init(&w, &o, &v);
    if (err) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    Rng r = {seed};
    world_sample(&w, &g, &r);
    return zones_tuple(&g);
}

PyDoc_STRVAR(bench_rules_doc,
             "bench_rules(options, cpu_seconds, seed, listed=False) -> (deals, games, actions, wall, cpu)\n\n"
             "rules/cirulla/rules/bench.py's random-policy loop, entirely native, for cpu_seconds of CPU; "
             "``listed`` picks each action from the whole list of legal codes.");

static PyObject *py_bench_rules(PyObject *self, PyObject *args) {
    PyObject *opts_obj;
    double seconds;
    unsigned long long seed;
    Opts o;
    long long deals, games, actions;
    double elapsed, cpu;
    int rc, listed = 0;
    (void)self;
    if (!PyArg_ParseTuple(args, "OdK|p", &opts_obj, &seconds, &seed, &listed)) return NULL;
    if (parse_opts(opts_obj, &o)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = bench_run(&o, seconds, seed, &deals, &games, &actions, &elapsed, &cpu, listed);
    Py_END_ALLOW_THREADS
    if (rc) return PyErr_NoMemory();
    return Py_BuildValue("(LLLdd)", deals, games, actions, elapsed, cpu);
}

/* ------------------------------------------------------------------ cheap frozen objects */

/* A frozen slots dataclass's generated __init__ sets each field through
   object.__setattr__: a few hundred nanoseconds a field, more than the rule it records. Its
   maker fills the fields' slots directly, as a dataclass without __post_init__ or defaults
   computed at init would: fields in order, every one given. The maker's self is the tuple
   (class, offsets as bytes). */
static PyObject *make_frozen(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    PyTypeObject *cls = (PyTypeObject *)PyTuple_GET_ITEM(self, 0);
    PyObject *offs = PyTuple_GET_ITEM(self, 1);
    Py_ssize_t n = PyBytes_GET_SIZE(offs) / (Py_ssize_t)sizeof(Py_ssize_t);
    const Py_ssize_t *off = (const Py_ssize_t *)PyBytes_AS_STRING(offs);
    if (nargs != n) {
        PyErr_Format(PyExc_TypeError, "%s() takes %zd positional arguments (%zd given)",
                     cls->tp_name, n, nargs);
        return NULL;
    }
    PyObject *obj = cls->tp_alloc(cls, 0);
    if (!obj) return NULL;
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_INCREF(args[i]);
        *(PyObject **)((char *)obj + off[i]) = args[i];
    }
    return obj;
}

static PyMethodDef make_frozen_def = {"make", (PyCFunction)(void (*)(void))make_frozen,
                                      METH_FASTCALL, "Build the object from its fields."};

PyDoc_STRVAR(frozen_maker_doc,
             "frozen_maker(cls, names) -> callable\n\n"
             "A constructor of the frozen slots dataclass ``cls`` taking its fields ``names`` "
             "positionally, in order, that fills the slots directly (the generated __init__ "
             "sets each through object.__setattr__). ValueError when a name is not a plain "
             "object slot of ``cls`` itself.");

static PyObject *py_frozen_maker(PyObject *self, PyObject *args) {
    PyObject *cls, *names;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!", &PyType_Type, &cls, &PyTuple_Type, &names)) return NULL;
    PyTypeObject *type = (PyTypeObject *)cls;
    Py_ssize_t n = PyTuple_GET_SIZE(names);
    PyObject *offs = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(Py_ssize_t));
    if (!offs) return NULL;
    Py_ssize_t *off = (Py_ssize_t *)PyBytes_AS_STRING(offs);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *d = PyDict_GetItemWithError(type->tp_dict, PyTuple_GET_ITEM(names, i));
        if (!d || !PyObject_TypeCheck(d, &PyMemberDescr_Type) ||
            ((PyMemberDescrObject *)d)->d_common.d_type != type ||
            ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
            Py_DECREF(offs);
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_ValueError, "%R is not an object slot of %s",
                             PyTuple_GET_ITEM(names, i), type->tp_name);
            return NULL;
        }
        off[i] = ((PyMemberDescrObject *)d)->d_member->offset;
    }
    PyObject *state = PyTuple_Pack(2, cls, offs);
    Py_DECREF(offs);
    if (!state) return NULL;
    PyObject *fn = PyCFunction_New(&make_frozen_def, state);
    Py_DECREF(state);
    return fn;
}

/* ------------------------------------------------------------------ game.py's Game: shared parts */

/* What gamestate.h's GameState (game.py's Game's base) and eventlist.h's Events use from
   game.py: the Action type and its slots, the makers of the events (bind_game sets them). */

static Py_ssize_t action_code_off, action_off[3];
static PyObject *actions_module; /* cirulla.rules.actions: _INTERNED_LIMIT */
static PyTypeObject *action_type;
static PyObject *card_played_mk, *declared_mk, *round_dealt_mk, *hand_dealt_mk, *decl_kinds,
    *action_build;

static Py_ssize_t slot_offset(PyTypeObject *type, const char *name) {
    PyObject *d = PyDict_GetItemString(type->tp_dict, name);
    if (!d || !PyObject_TypeCheck(d, &PyMemberDescr_Type) ||
        ((PyMemberDescrObject *)d)->d_member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_ValueError, "%s is not an object slot of %s", name, type->tp_name);
        return -1;
    }
    return ((PyMemberDescrObject *)d)->d_member->offset;
}

/* a non-negative int below 2**63 (masks, action codes): PyLong_AsLong loops over the
   digits, where 3.11's PyLong_AsUnsignedLongLong goes through _PyLong_AsByteArray, several
   times slower on the hot path */
/* An exact int of up to two 30-bit digits (every card mask, count and nearly every action
   code) read from its digits inline: CPython 3.11's int layout (ob_size's sign and the
   number of digits, then the digits), which 3.12 changed; elsewhere, and for anything
   else, the API call. 1: read into *out; 0: not such an int. */
#if PY_VERSION_HEX >= 0x030B0000 && PY_VERSION_HEX < 0x030C0000 && PYLONG_BITS_IN_DIGIT == 30
static inline int small_int(PyObject *o, long long *out) {
    if (!PyLong_CheckExact(o)) return 0;
    const digit *d = ((PyLongObject *)o)->ob_digit;
    switch (Py_SIZE(o)) {
    case 0: *out = 0; return 1;
    case 1: *out = d[0]; return 1;
    case -1: *out = -(long long)d[0]; return 1;
    case 2: *out = (long long)d[0] | (long long)d[1] << 30; return 1;
    default: return 0;
    }
}
#else
static inline int small_int(PyObject *o, long long *out) {
    (void)o;
    (void)out;
    return 0;
}
#endif

static inline int as_u64(PyObject *o, u64 *out) {
    long long fast;
    if (small_int(o, &fast) && fast >= 0) {
        *out = (u64)fast;
        return 0;
    }
#if LONG_MAX >= 0x7fffffffffffffffL
    long v = PyLong_AsLong(o);
#else
    long long v = PyLong_AsLongLong(o);
#endif
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0) {
        PyErr_SetString(PyExc_OverflowError, "can't convert negative int to unsigned");
        return -1;
    }
    *out = (u64)v;
    return 0;
}

static inline int as_mask(PyObject *o, u64 *out) {
    if (as_u64(o, out)) return -1;
    *out &= ALL_CARDS;
    return 0;
}

static inline int as_int(PyObject *o, int lo, int hi, const char *what, int *out) {
    long long fast;
    if (small_int(o, &fast) && fast >= lo && fast <= hi) {
        *out = (int)fast;
        return 0;
    }
    long v = PyLong_AsLong(o);
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < lo || v > hi) {
        PyErr_Format(PyExc_ValueError, "Game.%s is %ld, out of range", what, v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* Options as engine.h's Opts, read once per options object (Options is frozen; the cache
   holds a reference, so the object cannot be replaced by another at the same address) */
static PyObject *opts_cached;
static Opts opts_cache;
static const char *const OPT_NAMES[9] = {
    "players", "target", "must_capture", "pairing_precedence", "ace_sweep_scopa",
    "dealer_low_bonus", "primiera_needs_all_suits", "piccola_max", "cappotto"};

static int opts_of(PyObject *options, Opts *o) {
    if (options == opts_cached) {
        *o = opts_cache;
        return 0;
    }
    int v[9];
    for (int i = 0; i < 9; i++) {
        PyObject *x = PyObject_GetAttrString(options, OPT_NAMES[i]);
        if (!x) return -1;
        long y = PyLong_AsLong(x);
        Py_DECREF(x);
        if (y == -1 && PyErr_Occurred()) return -1;
        v[i] = (int)y;
    }
    if (v[0] < 2 || v[0] > MAX_PLAYERS) {
        PyErr_SetString(PyExc_ValueError, "options: players must be 2, 3 or 4");
        return -1;
    }
    *o = (Opts){v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8]};
    Py_XSETREF(opts_cached, Py_NewRef(options));
    opts_cache = *o;
    return 0;
}

/* the position's cache entry [hand, table, wild, codes, actions], if it is this position's */

/* a new list of a tuple's or list's items: the caller's copy */
static PyObject *list_of(PyObject *seq) {
    Py_ssize_t k = PySequence_Fast_GET_SIZE(seq);
    PyObject **items = PySequence_Fast_ITEMS(seq), *out = PyList_New(k);
    for (Py_ssize_t i = 0; out && i < k; i++) PyList_SET_ITEM(out, i, Py_NewRef(items[i]));
    return out;
}




/* Action.from_int's table where the native core runs: one shared Action per code, for
   from_int (native.action_of_code) and legal_actions alike. Random play meets a hundred
   thousand codes and more, so a code's look-up misses the processor's caches; here it is
   one slot (open addressing on the code itself, at most half full), where the dict it
   replaces needed an int for the key, its index, its entry and the key's object, and a
   small cache in front of it to be fast. Bounded: when full it is emptied (servers and
   bots run for days), and the codes met after are shared again from then on. */
#define ACTION_TABLE_BITS 18
#define ACTION_TABLE_SLOTS (1 << ACTION_TABLE_BITS)
#define ACTION_TABLE_LIMIT (ACTION_TABLE_SLOTS / 2)
static struct {
    u64 code;
    PyObject *action; /* NULL: a free slot */
} action_table[ACTION_TABLE_SLOTS];
static int action_table_held;

/* the slot of ``code``: its own, or the free one where it goes */
static inline unsigned action_slot(u64 code) {
    unsigned h = (unsigned)((code * 0x9E3779B97F4A7C15ULL) >> (64 - ACTION_TABLE_BITS));
    while (action_table[h].action && action_table[h].code != code)
        h = (h + 1) & (ACTION_TABLE_SLOTS - 1);
    return h;
}

static void action_table_clear(void) {
    for (int i = 0; i < ACTION_TABLE_SLOTS; i++) Py_CLEAR(action_table[i].action);
    action_table_held = 0;
}

/* ``a``, the Action of ``code``, shared from now on; a new reference to it */
static PyObject *action_table_put(u64 code, PyObject *a) {
    if (action_table_held >= ACTION_TABLE_LIMIT) action_table_clear();
    unsigned h = action_slot(code);
    action_table_held += !action_table[h].action; /* (taken meanwhile: a builder's Python) */
    action_table[h].code = code;
    Py_XSETREF(action_table[h].action, Py_NewRef(a));
    return a;
}

/* The Action of a legal code, built here as from_int would build it: its fields' slots
   filled directly (the dataclass's __init__ and __post_init__ cost microseconds), a
   declaration's Declaration shared by the codes that make it (it is immutable). */
static PyObject *decl_objs[64]; /* Declaration.from_code(d) by declaration code d */

static PyObject *new_action(PyObject *code_obj, u64 code) {
    int d = (int)(code >> 6 & 63);
    if (!action_type) {
        PyErr_SetString(PyExc_RuntimeError, "bind_game has not given the Action class");
        return NULL;
    }
    PyObject *decl = Py_None;
    if (d) { /* a declaration: its (immutable) Declaration, made once by from_code */
        if (!decl_objs[d]) {
            PyObject *cls = PyObject_GetAttrString(actions_module, "Declaration");
            decl_objs[d] = cls ? PyObject_CallMethod(cls, "from_code", "i", d) : NULL;
            Py_XDECREF(cls);
            if (!decl_objs[d]) return NULL;
        }
        decl = decl_objs[d];
    }
    PyObject *card = PyLong_FromLong((long)(code & 63)), *capture = PyLong_FromLongLong(
                                                             (long long)(code >> 12));
    PyObject *a = card && capture ? action_type->tp_alloc(action_type, 0) : NULL;
    if (!a) {
        Py_XDECREF(card);
        Py_XDECREF(capture);
        return NULL;
    }
    *(PyObject **)((char *)a + action_off[0]) = card;
    *(PyObject **)((char *)a + action_off[1]) = capture;
    *(PyObject **)((char *)a + action_off[2]) = Py_NewRef(decl);
    *(PyObject **)((char *)a + action_code_off) = Py_NewRef(code_obj);
    /* ints and None or a shared Declaration (frozen: a kind and an int), immutable: never
       part of a cycle, so the collector need not visit it (random play shares a hundred
       thousand of them, which every full collection would walk through) */
    if (PyObject_IS_GC(a)) PyObject_GC_UnTrack(a);
    return a;
}

/* The shared Action of ``code``, or the one ``make`` builds from its int (``code_obj``,
   or NULL: made here if needed), shared from then on. */
static inline PyObject *shared_action(u64 code, PyObject *code_obj,
                                      PyObject *(*make)(PyObject *, u64)) {
    unsigned h = action_slot(code);
    if (action_table[h].action) return Py_NewRef(action_table[h].action);
    PyObject *own = code_obj ? Py_NewRef(code_obj) : PyLong_FromUnsignedLongLong(code);
    if (!own) return NULL;
    PyObject *a = make(own, code);
    Py_DECREF(own);
    return a ? action_table_put(code, a) : NULL;
}

/* The shared Action of a legal ``code`` (built here if new). */
static PyObject *interned_action(u64 code, PyObject *code_obj) {
    return shared_action(code, code_obj, new_action);
}

/* a new code's Action through actions.Action's own checks (from_int's) */
static PyObject *checked_action(PyObject *code_obj, u64 code) {
    (void)code;
    return PyObject_CallOneArg(action_build, code_obj);
}

PyDoc_STRVAR(action_of_code_doc,
             "action_of_code(code) -> Action\n\n"
             "Action.from_int where the native core runs: the shared Action of ``code`` "
             "(built and checked by actions.Action's own constructor when new).");

static PyObject *py_action_of_code(PyObject *self, PyObject *code_obj) {
    (void)self;
    u64 code;
    if (!action_build) {
        PyErr_SetString(PyExc_RuntimeError, "bind_game has not given the Action class");
        return NULL;
    }
    if (!PyLong_CheckExact(code_obj) || as_u64(code_obj, &code)) { /* checked, not shared */
        PyErr_Clear();
        return checked_action(code_obj, 0);
    }
    return shared_action(code, code_obj, checked_action);
}

PyDoc_STRVAR(action_table_doc,
             "action_table(clear=False) -> tuple\n\n"
             "(codes held, the most it holds) of the shared Actions' table; ``clear`` "
             "empties it first (tests).");

static PyObject *py_action_table(PyObject *self, PyObject *args) {
    (void)self;
    int clear = 0;
    if (!PyArg_ParseTuple(args, "|p", &clear)) return NULL;
    if (clear) action_table_clear();
    return Py_BuildValue("ii", action_table_held, ACTION_TABLE_LIMIT);
}

/* ``maker(*args)``, stealing the n arguments (any of them NULL: an error already set).
   A maker of frozen_maker's has its object's slots filled here directly, the references
   handed over (the same object as calling it, without the call). */
static PyObject *make_stolen(PyObject *maker, PyObject **args, int n) {
    PyObject *obj = NULL;
    int ok = 1;
    for (int i = 0; i < n; i++) ok &= args[i] != NULL;
    if (ok && PyCFunction_Check(maker) &&
        ((PyCFunctionObject *)maker)->m_ml == &make_frozen_def) {
        PyObject *state = PyCFunction_GET_SELF(maker);
        PyTypeObject *cls = (PyTypeObject *)PyTuple_GET_ITEM(state, 0);
        PyObject *offs = PyTuple_GET_ITEM(state, 1);
        const Py_ssize_t *off = (const Py_ssize_t *)PyBytes_AS_STRING(offs);
        if (PyBytes_GET_SIZE(offs) / (Py_ssize_t)sizeof(Py_ssize_t) == n &&
            (obj = cls->tp_alloc(cls, 0))) {
            for (int i = 0; i < n; i++) *(PyObject **)((char *)obj + off[i]) = args[i];
            return obj;
        }
    }
    if (ok && !PyErr_Occurred()) obj = PyObject_Vectorcall(maker, args, (size_t)n, NULL);
    for (int i = 0; i < n; i++) Py_XDECREF(args[i]);
    return obj;
}

static PyObject *threes[MAX_PLAYERS + 1]; /* (3,) * n: a round's hand sizes, shared */

static int play_emit(void *ctx, int type, const long long *a, int n) {
    PyObject *events = ctx, *ev = NULL;
    (void)n;
    if (type == EV_CARD_PLAYED) {
        PyObject *args[7];
        for (int i = 0; i < 4; i++) args[i] = PyLong_FromLong((long)a[i]); /* small ints */
        args[4] = PyLong_FromLongLong(a[4]);
        args[5] = PyBool_FromLong((long)a[5]);
        args[6] = PyBool_FromLong((long)a[6]);
        ev = make_stolen(card_played_mk, args, 7);
    } else if (type == EV_DECLARED) {
        PyObject *args[6] = {PyLong_FromLongLong(a[0]), PyLong_FromLongLong(a[1]),
                             PySequence_GetItem(decl_kinds, (Py_ssize_t)a[2]),
                             PyLong_FromLongLong(a[3]),
                             a[4] ? PyLong_FromLongLong(a[4]) : Py_NewRef(Py_None),
                             PyLong_FromLongLong(a[5])};
        ev = make_stolen(declared_mk, args, 6);
    } else if (type == EV_ROUND_DEALT) {
        PyObject *args[3] = {PyLong_FromLongLong(a[0]), Py_NewRef(threes[a[1]]),
                             PyLong_FromLongLong(a[2])};
        ev = make_stolen(round_dealt_mk, args, 3);
    } else if (type == EV_HAND_DEALT) {
        PyObject *args[3] = {PyLong_FromLongLong(a[0]), PyLong_FromLongLong(a[1]),
                             PyLong_FromLongLong(a[2])};
        ev = make_stolen(hand_dealt_mk, args, 3);
    } else {
        PyErr_Format(PyExc_RuntimeError, "unexpected event %d while playing a card", type);
        return -1;
    }
    if (!ev) return -1;
    int rc = PyList_Append(events, ev);
    Py_DECREF(ev);
    return rc;
}

/* ------------------------------------------------------------------ the deal's end, in C */

/* Game._end_deal and the next deal's Game._start_deal on the game's slots, through
   engine.h's g_end_deal (which calls g_start_deal): the score, the totals, the winner, the
   events, the next deck (the deck source's next_deck: a seeded DeckSource shuffles in C)
   and the new deal's zones. The Python methods stay the reference
   (tests/rules/test_native.py plays both side by side). */

enum {
    M_REDEAL, M_DEAL_STARTED, M_DEALER_BONUS, M_LAST_TAKE, M_DEAL_SCORED, M_GAME_OVER,
    M_SIDE_SCORE, M_DEAL_SCORE, M_DECK_ERROR, M_COUNT
};
static PyObject *deal_mk[M_COUNT]; /* bind_game's ``deal`` tuple, in this order */
static PyObject *str_next_deck;

typedef struct {
    PyObject *events; /* the caller's list, or NULL: no events */
    PyObject *score;  /* the DealScore built at EV_DEAL_SCORED (Game.last_score) */
    PyObject *deck_source, *decks_used;
    G *g;
    PyObject *given; /* a DealScore already built: EV_DEAL_SCORED's, not built again */
} DealCtx;

#define call_mk make_stolen

static PyObject *ints_tuple(const long long *a, int n) {
    PyObject *t = PyTuple_New(n);
    for (int i = 0; t && i < n; i++) {
        PyObject *x = PyLong_FromLongLong(a[i]);
        if (!x) Py_CLEAR(t);
        else PyTuple_SET_ITEM(t, i, x);
    }
    return t;
}

#define L(x) PyLong_FromLongLong(x)

static int deal_emit(void *ctx, int type, const long long *a, int n) {
    DealCtx *d = ctx;
    PyObject *ev = NULL;
    (void)n;
    if (type == EV_DEAL_SCORED && d->given) { /* a lazy event list's, built at the move */
        Py_XSETREF(d->score, Py_NewRef(d->given));
        if (!d->events) return 0;
        int sides = (int)a[2];
        PyObject *args[3] = {L(a[0]), Py_NewRef(d->given), ints_tuple(a + 3 + 7 * sides, sides)};
        ev = call_mk(deal_mk[M_DEAL_SCORED], args, 3);
    } else if (type == EV_DEAL_SCORED) { /* deal, cappotto, sides, 7 items per side, totals */
        int sides = (int)a[2];
        PyObject *per = PyTuple_New(sides), *caps = PyTuple_New(sides);
        for (int i = 0; per && caps && i < sides; i++) {
            PyObject *items[7];
            for (int k = 0; k < 7; k++) items[k] = L(a[3 + 7 * i + k]);
            PyObject *side = call_mk(deal_mk[M_SIDE_SCORE], items, 7);
            PyObject *cap = PyLong_FromUnsignedLongLong(d->g->captured[i]);
            if (!side || !cap) {
                Py_XDECREF(side);
                Py_XDECREF(cap);
                Py_CLEAR(per);
                break;
            }
            PyTuple_SET_ITEM(per, i, side);
            PyTuple_SET_ITEM(caps, i, cap);
        }
        if (!per || !caps) {
            Py_XDECREF(per);
            Py_XDECREF(caps);
            return -1;
        }
        PyObject *sargs[3] = {per, a[1] < 0 ? Py_NewRef(Py_None) : L(a[1]), caps};
        PyObject *score = call_mk(deal_mk[M_DEAL_SCORE], sargs, 3);
        if (!score) return -1;
        Py_XSETREF(d->score, score);
        if (!d->events) return 0;
        PyObject *args[3] = {L(a[0]), Py_NewRef(score), ints_tuple(a + 3 + 7 * sides, sides)};
        ev = call_mk(deal_mk[M_DEAL_SCORED], args, 3);
    } else if (!d->events) {
        return 0;
    } else if (type == EV_LAST_TAKE) {
        PyObject *args[2] = {a[0] < 0 ? Py_NewRef(Py_None) : L(a[0]), L(a[1])};
        ev = call_mk(deal_mk[M_LAST_TAKE], args, 2);
    } else if (type == EV_GAME_OVER) { /* winner, cappotto, sides, totals */
        PyObject *args[3] = {L(a[0]), ints_tuple(a + 3, (int)a[2]), PyBool_FromLong((long)a[1])};
        ev = call_mk(deal_mk[M_GAME_OVER], args, 3);
    } else if (type == EV_REDEAL) {
        PyObject *args[3] = {L(a[0]), L(a[1]), L(a[2])};
        ev = call_mk(deal_mk[M_REDEAL], args, 3);
    } else if (type == EV_DEAL_STARTED) {
        PyObject *args[4] = {L(a[0]), L(a[1]), L(a[2]), Py_NewRef(threes[a[3]])};
        ev = call_mk(deal_mk[M_DEAL_STARTED], args, 4);
    } else if (type == EV_HAND_DEALT) {
        PyObject *args[3] = {L(a[0]), L(a[1]), L(a[2])};
        ev = call_mk(hand_dealt_mk, args, 3);
    } else if (type == EV_DEALER_BONUS) {
        PyObject *args[4] = {L(a[0]), L(a[1]), L(a[2]), L(a[3])};
        ev = call_mk(deal_mk[M_DEALER_BONUS], args, 4);
    } else {
        PyErr_Format(PyExc_RuntimeError, "unexpected event %d at a deal's end", type);
        return -1;
    }
    if (!ev) return -1;
    int rc = PyList_Append(d->events, ev);
    Py_DECREF(ev);
    return rc;
}

#undef L

/* a deck order from Python: 40 distinct cards */
static int deck_from(PyObject *obj, uint8_t *deck) {
    PyObject *seq = PySequence_Fast(obj, "a deck order is a list of 40 cards");
    if (!seq) return -1;
    u64 seen = 0;
    int ok = PySequence_Fast_GET_SIZE(seq) == NUM_CARDS;
    for (int i = 0; ok && i < NUM_CARDS; i++) {
        long c = PyLong_AsLong(PySequence_Fast_GET_ITEM(seq, i));
        if (c == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        ok = c >= 0 && c < NUM_CARDS && !(seen >> c & 1);
        seen |= 1ULL << (c & 63);
        deck[i] = (uint8_t)c;
    }
    Py_DECREF(seq);
    if (!ok) PyErr_SetString(deal_mk[M_DECK_ERROR], "a deck order must list all 40 cards once each");
    return ok ? 0 : -1;
}

/* DeckSource.next_deck for g_start_deal, each deck appended to Game.decks_used: the
   game's deck source asked for it (a seeded DeckSource shuffles in C itself,
   native.seeded_deck) */
static int deal_deck(void *ctx, int deal_no, uint8_t *deck) {
    DealCtx *d = ctx;
    PyObject *ds = d->deck_source, *used = NULL;
    PyObject *no = PyLong_FromLong(deal_no);
    if (!no) return -1;
    used = PyObject_CallMethodOneArg(ds, str_next_deck, no);
    Py_DECREF(no);
    if (!used) return -1;
    if (deck_from(used, deck)) {
        Py_DECREF(used);
        return -1;
    }
    int rc = PyList_Append(d->decks_used, used);
    Py_DECREF(used);
    return rc;
}










#include "eventlist.h"
#include "gamestate.h"

PyDoc_STRVAR(bind_game_doc,
             "bind_game(game_cls, action_cls, card_played, declared, round_dealt, hand_dealt, "
             "kinds, build, deal) -> dict\n\n"
             "Method descriptors of GameState's methods made for game.py's Game (a subclass of "
             "GameState): legal_codes, legal_actions, is_legal, apply, apply_code, copy, "
             "_first_deal, by name. The four makers build those events, kinds maps "
             "a declaration kind code to DeclarationKind, build(code) builds a checked Action "
             "(action_of_code's new codes); deal "
             "holds the makers of the deal's events and scores, DeckSource and DeckError "
             "(the deal's end and the next deal's start in C).");

static PyObject *py_bind_game(PyObject *self, PyObject *args) {
    PyObject *game_cls, *act_cls, *cp, *dec, *rd, *hd, *kinds, *build, *deal;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!O!OOOOOOO!", &PyType_Type, &game_cls, &PyType_Type,
                          &act_cls, &cp, &dec, &rd, &hd, &kinds, &build, &PyTuple_Type,
                          &deal))
        return NULL;
    if (PyTuple_GET_SIZE(deal) != M_COUNT ||
        !PyExceptionClass_Check(PyTuple_GET_ITEM(deal, M_DECK_ERROR))) {
        PyErr_SetString(PyExc_TypeError, "bind_game: deal is (redeal, deal_started, "
                        "dealer_bonus, last_take, deal_scored, game_over, side_score, "
                        "deal_score, DeckError)");
        return NULL;
    }
    for (int i = 0; i < M_COUNT; i++) Py_XSETREF(deal_mk[i], Py_NewRef(PyTuple_GET_ITEM(deal, i)));
    if (!str_next_deck) {
        str_next_deck = PyUnicode_InternFromString("next_deck");
        if (!str_next_deck) return NULL;
        for (int k = 0; k <= MAX_PLAYERS; k++) {
            PyObject *three = PyLong_FromLong(3);
            if (!three || !(threes[k] = PyTuple_New(k))) return NULL;
            for (int i = 0; i < k; i++) PyTuple_SET_ITEM(threes[k], i, Py_NewRef(three));
            Py_DECREF(three);
        }
    }
    if (!PyType_IsSubtype((PyTypeObject *)game_cls, &StateType)) {
        PyErr_SetString(PyExc_TypeError, "bind_game: game_cls must derive from GameState");
        return NULL;
    }
    if ((action_code_off = slot_offset((PyTypeObject *)act_cls, "_code")) < 0 ||
        (action_off[0] = slot_offset((PyTypeObject *)act_cls, "card")) < 0 ||
        (action_off[1] = slot_offset((PyTypeObject *)act_cls, "capture")) < 0 ||
        (action_off[2] = slot_offset((PyTypeObject *)act_cls, "declaration")) < 0)
        return NULL;
    PyObject *module_name = PyObject_GetAttrString(act_cls, "__module__");
    if (!module_name) return NULL;
    Py_XSETREF(actions_module, PyImport_Import(module_name));
    Py_DECREF(module_name);
    if (!actions_module) return NULL;
    action_type = (PyTypeObject *)act_cls;
    Py_INCREF(act_cls);
    Py_XSETREF(card_played_mk, Py_NewRef(cp));
    Py_XSETREF(declared_mk, Py_NewRef(dec));
    Py_XSETREF(round_dealt_mk, Py_NewRef(rd));
    Py_XSETREF(hand_dealt_mk, Py_NewRef(hd));
    Py_XSETREF(decl_kinds, Py_NewRef(kinds));
    Py_XSETREF(action_build, Py_NewRef(build));
    PyObject *out = PyDict_New();
    /* a Game with its state in C: GameState's methods, their descriptors made for game_cls
       itself (a call then checks the instance's exact type, not the base's MRO) */
    for (PyMethodDef *m = State_methods; out && m->ml_name; m++) {
        PyObject *d = PyDescr_NewMethod((PyTypeObject *)game_cls, m);
        if (!d || PyDict_SetItemString(out, m->ml_name, d)) Py_CLEAR(out);
        Py_XDECREF(d);
    }
    return out;
}

/* ------------------------------------------------------------------ the Game type */

typedef struct {
    PyObject_HEAD G g;
    uint8_t (*decks)[NUM_CARDS];
    int ndecks, next_deck;
    Rng rng;
    PyObject *events; /* list being filled by apply(), or NULL */
    Scratch s;
} GameObject;

static int list_deck(void *ctx, int deal_no, uint8_t *deck) {
    GameObject *self = ctx;
    if (!self->decks) return rng_deck(&self->rng, deal_no, deck);
    if (self->next_deck >= self->ndecks) {
        PyErr_Format(PyExc_ValueError,
                     "deal %d needs deck order #%d but only %d were given (a redeal takes the "
                     "next one)",
                     deal_no, self->next_deck + 1, self->ndecks);
        return -1;
    }
    memcpy(deck, self->decks[self->next_deck++], NUM_CARDS);
    return 0;
}

static int list_emit(void *ctx, int type, const long long *a, int n) {
    GameObject *self = ctx;
    if (!self->events) return 0;
    PyObject *t = PyTuple_New(n + 1);
    if (!t) return -1;
    PyTuple_SET_ITEM(t, 0, PyLong_FromLong(type));
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i + 1, PyLong_FromLongLong(a[i]));
    int rc = PyList_Append(self->events, t);
    Py_DECREF(t);
    return rc;
}

static void Game_dealloc(GameObject *self) {
    free(self->decks);
    Py_XDECREF(self->events);
    scratch_free(&self->s);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Game_init(GameObject *self, PyObject *args, PyObject *kw) {
    static char *names[] = {"options", "decks", "seed", "first_dealer", "deal_only", NULL};
    PyObject *opts_obj, *decks_obj = Py_None;
    unsigned long long seed = 0;
    int first_dealer = -1, deal_only = 0;
    Opts o;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|OKip", names, &opts_obj, &decks_obj, &seed,
                                     &first_dealer, &deal_only))
        return -1;
    if (parse_opts(opts_obj, &o)) return -1;
    free(self->decks);
    self->decks = NULL;
    if (decks_obj != Py_None) {
        PyObject *seq = PySequence_Fast(decks_obj, "decks must be a sequence of deck orders");
        if (!seq) return -1;
        Py_ssize_t nd = PySequence_Fast_GET_SIZE(seq);
        self->decks = malloc((size_t)(nd ? nd : 1) * NUM_CARDS);
        self->ndecks = (int)nd;
        for (Py_ssize_t d = 0; d < nd; d++) {
            long long cards[NUM_CARDS];
            if (get_ints(PySequence_Fast_GET_ITEM(seq, d), NUM_CARDS, cards, 0, "deck")) {
                Py_DECREF(seq);
                return -1;
            }
            u64 seen = 0;
            for (int i = 0; i < NUM_CARDS; i++) {
                if (cards[i] < 0 || cards[i] >= NUM_CARDS) break;
                seen |= 1ULL << cards[i];
                self->decks[d][i] = (uint8_t)cards[i];
            }
            if (seen != ALL_CARDS) {
                Py_DECREF(seq);
                PyErr_SetString(PyExc_ValueError, "a deck order must list all 40 cards once each");
                return -1;
            }
        }
        Py_DECREF(seq);
    }
    self->next_deck = 0;
    self->rng.s = seed;
    g_init(&self->g, &o);
    if (first_dealer >= o.players) {
        PyErr_SetString(PyExc_ValueError, "first dealer must be a seat");
        return -1;
    }
    self->g.dealer = (first_dealer < 0 ? o.players - 1 : first_dealer) - 1;
    self->g.deal_only = deal_only;
    self->g.deck = list_deck;
    self->g.deck_ctx = self;
    self->g.emit = list_emit;
    self->g.emit_ctx = self;
    Py_CLEAR(self->events);
    self->events = PyList_New(0);
    if (!self->events) return -1;
    if (g_start_deal(&self->g)) return -1;
    return 0;
}

static PyObject *Game_take_events(GameObject *self, PyObject *unused) {
    (void)unused;
    PyObject *ev = self->events;
    self->events = PyList_New(0);
    if (!self->events) {
        self->events = ev;
        return NULL;
    }
    return ev;
}

static PyObject *Game_legal_codes(GameObject *self, PyObject *unused) {
    G *g = &self->g;
    Tab t;
    (void)unused;
    if (g->winner >= 0 || g->deal_over) return PyList_New(0);
    if (tab_init(&self->s, &t, g->table, g->wild) ||
        legal_codes(&self->s, &t, g->hands[g->turn], g->wild, g->o.must_capture,
                    g->o.pairing_precedence))
        return PyErr_NoMemory();
    return codes_list(&self->s);
}

static PyObject *Game_apply_code(GameObject *self, PyObject *arg) {
    unsigned long long code = PyLong_AsUnsignedLongLong(arg);
    if (code == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    G *g = &self->g;
    if (g->winner >= 0 || g->deal_over) {
        PyErr_SetString(PyExc_ValueError, "the deal is over; no more actions");
        return NULL;
    }
    /* unchecked like Game.apply_code, but never corrupt memory: the card must be held */
    if ((code & 63) >= NUM_CARDS || !(g->hands[g->turn] >> (code & 63) & 1)) {
        PyErr_SetString(PyExc_ValueError, "apply_code: the card is not in the hand to move");
        return NULL;
    }
    if (g_play(g, code)) return NULL;
    Py_RETURN_NONE;
}

static PyObject *mask_tuple(const u64 *m, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, PyLong_FromUnsignedLongLong(m[i]));
    return t;
}

static PyObject *int_tuple(const int *v, int n) {
    PyObject *t = PyTuple_New(n);
    if (!t) return NULL;
    for (int i = 0; i < n; i++) PyTuple_SET_ITEM(t, i, PyLong_FromLong(v[i]));
    return t;
}

static PyObject *Game_state(GameObject *self, PyObject *unused) {
    G *g = &self->g;
    (void)unused;
    PyObject *stock = PyList_New(g->nstock);
    if (!stock) return NULL;
    for (int j = 0; j < g->nstock; j++) PyList_SET_ITEM(stock, j, PyLong_FromLong(g->stock[j]));
    return Py_BuildValue(
        "{s:i,s:i,s:i,s:i,s:i,s:N,s:K,s:N,s:N,s:N,s:N,s:N,s:i,s:i,s:O,s:O,s:i,s:i}", "dealer",
        g->dealer, "deal_no", g->deal_no, "round", g->round, "turn", g->turn, "in_hands",
        g->in_hands, "hands", mask_tuple(g->hands, g->n), "table", (unsigned long long)g->table,
        "stock", stock, "captured", mask_tuple(g->captured, g->sides), "scope",
        int_tuple(g->scope, g->sides), "declared", mask_tuple(g->declared, g->n), "totals",
        int_tuple(g->totals, g->sides), "last_taker", g->last_taker, "wild", g->wild, "winner",
        g->winner >= 0 ? PyLong_FromLong(g->winner) : Py_None, "deal_over",
        g->deal_over ? Py_True : Py_False, "cappotto", g->cappotto, "deal_only", g->deal_only);
}

static PyMethodDef Game_methods[] = {
    {"legal_codes", (PyCFunction)Game_legal_codes, METH_NOARGS,
     "Legal action codes of the seat to move, in the protocol's order."},
    {"apply_code", (PyCFunction)Game_apply_code, METH_O,
     "Apply a legal action code; its events are queued for take_events()."},
    {"take_events", (PyCFunction)Game_take_events, METH_NOARGS,
     "The event tuples queued since the last call (dealing included), as a list."},
    {"state", (PyCFunction)Game_state, METH_NOARGS, "Every zone and counter, as a dict."},
    {NULL, NULL, 0, NULL}};

static PyTypeObject GameType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cirulla.rules._native.Game",
    .tp_basicsize = sizeof(GameObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Game(options, decks=None, seed=0, first_dealer=-1, deal_only=False): the "
              "native state machine (game.py's Game) for the cross-core differential test.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Game_init,
    .tp_dealloc = (destructor)Game_dealloc,
    .tp_methods = Game_methods,
};

/* The API loop's floor (rules/cirulla/rules/bench.py: bench_api_floor): a stand-in for
 * Game with the cheapest legal_actions() and apply() C allows -- a fresh copy of a fixed
 * list, and a counter that ends the "deal" every per_deal calls -- so the bench's own
 * Python program, run on it, measures what the interpreter costs before any rules work: the
 * highest rate any Game could show to that program in the same run. */
typedef struct {
    PyObject_HEAD PyObject *actions;
    PyObject *winner;
    long deal_no, left, per_deal;
} FloorObject;

static int Floor_init(FloorObject *self, PyObject *args, PyObject *kwds) {
    static char *names[] = {"actions", "per_deal", NULL};
    PyObject *actions;
    long per_deal;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "O!l", names, &PyList_Type, &actions,
                                     &per_deal))
        return -1;
    if (per_deal < 1) {
        PyErr_SetString(PyExc_ValueError, "per_deal must be at least 1");
        return -1;
    }
    Py_INCREF(actions);
    Py_XSETREF(self->actions, actions);
    Py_INCREF(Py_None);
    Py_XSETREF(self->winner, Py_None);
    self->deal_no = 1;
    self->left = self->per_deal = per_deal;
    return 0;
}

static void Floor_dealloc(FloorObject *self) {
    Py_XDECREF(self->actions);
    Py_XDECREF(self->winner);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Floor_legal_actions(FloorObject *self, PyObject *unused) {
    (void)unused;
    return PyList_GetSlice(self->actions, 0, PY_SSIZE_T_MAX);
}

static PyObject *Floor_apply(FloorObject *self, PyObject *action) {
    (void)action;
    if (--self->left == 0) {
        self->deal_no++;
        self->left = self->per_deal;
    }
    Py_RETURN_NONE;
}

static PyMethodDef Floor_methods[] = {
    {"legal_actions", (PyCFunction)Floor_legal_actions, METH_NOARGS,
     "A fresh copy of the fixed list (Game.legal_actions' contract, nothing computed)."},
    {"apply", (PyCFunction)Floor_apply, METH_O,
     "Count one action; every per_deal actions the deal number moves on."},
    {NULL, NULL, 0, NULL}};

static PyMemberDef Floor_members[] = {
    {"deal_no", T_LONG, offsetof(FloorObject, deal_no), READONLY, "The deal being played."},
    {"winner", T_OBJECT, offsetof(FloorObject, winner), READONLY, "Always None."},
    {NULL, 0, 0, 0, NULL}};

static PyTypeObject FloorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cirulla.rules._native.FloorGame",
    .tp_basicsize = sizeof(FloorObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "FloorGame(actions, per_deal): Game's loop surface doing no rules work, the "
              "floor of bench.py's api loop.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Floor_init,
    .tp_dealloc = (destructor)Floor_dealloc,
    .tp_methods = Floor_methods,
    .tp_members = Floor_members,
};

static PyMethodDef module_methods[] = {
    {"legal_codes", py_legal_codes, METH_VARARGS, legal_codes_doc},
    {"captures", py_captures, METH_VARARGS, captures_doc},
    {"declaration_codes", py_declaration_codes, METH_O,
     "declaration_codes(hand) -> tuple: actions.declaration_codes."},
    {"dealer_bonus", py_dealer_bonus, METH_VARARGS,
     "dealer_bonus(table, low_bonus) -> int: game.dealer_bonus."},
    {"score_deal", py_score_deal, METH_VARARGS, score_deal_doc},
    {"seeded_decks", py_seeded_decks, METH_VARARGS, seeded_decks_doc},
    {"action_of_code", py_action_of_code, METH_O, action_of_code_doc},
    {"action_table", py_action_table, METH_VARARGS, action_table_doc},
    {"sample_world", py_sample_world, METH_VARARGS, sample_world_doc},
    {"bench_rules", py_bench_rules, METH_VARARGS, bench_rules_doc},
    {"random_deals_digest", py_random_deals_digest, METH_VARARGS, random_deals_digest_doc},
    {"frozen_maker", py_frozen_maker, METH_VARARGS, frozen_maker_doc},
    {"bind_game", py_bind_game, METH_VARARGS, bind_game_doc},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "The compiled rules core (engine.h, _native.c; docs/rules.md).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    init_tables();
    mt_base_init();
#ifdef DECK_AVX2
    __builtin_cpu_init();
    deck_isa = (__builtin_cpu_supports("avx2") ? ISA_AVX2 : 0) | (has_sha() ? ISA_SHA : 0);
#endif
    if (PyType_Ready(&GameType) < 0 || PyType_Ready(&FloorType) < 0 ||
        PyType_Ready(&StateType) < 0 || PyType_Ready(&EventsType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (PyModule_AddType(m, &GameType) < 0 || PyModule_AddType(m, &FloorType) < 0 ||
        PyModule_AddType(m, &StateType) < 0 || PyModule_AddType(m, &EventsType) < 0 ||
        PyModule_AddStringConstant(m, "DECK_ISA", ISA_NAMES[deck_isa]) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

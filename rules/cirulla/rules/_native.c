/*
 * cirulla.rules._native: the compiled rules core and the ISMCTS search loop.
 *
 * The pure-Python modules of cirulla.rules are the readable reference; this file
 * re-implements their hot path (captures, declarations, legal actions in the protocol's
 * order, applying an action, dealing, deal scoring, sampling a world from a seat's view)
 * and runs whole searches and benchmarks without returning to Python per step. Every
 * function mirrors a Python one named in its comment; tests/test_rules_native.py drives
 * both through the same random games and requires identical actions, events and states.
 *
 * Encodings are the Python ones: a card is rank_index * 4 + suit, a set of cards a 40-bit
 * mask, an action code card | declaration << 6 | capture << 12 (rules/cirulla/rules/actions.py).
 */
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

static inline int card_value(int c) { return (c >> 2) + 1; }
static inline int popc(u64 m) { return __builtin_popcountll(m); }

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
    for (int i = n - 1; i > 0; i--) {
        int j = (int)rng_below(r, (uint32_t)(i + 1));
        uint8_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
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

typedef struct {
    u64 table;
    int ncards, ace_on_table, err, dp;
    int vals[NUM_CARDS];
    int have[11], start[11], len[11];
} Tab;

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

/* The table's subsets summing to at most 14, the 7H at its named value (table_entry). */
static int tab_init(Scratch *s, Tab *t, u64 table, int wild) {
    int cards[NUM_CARDS], vals[NUM_CARDS];
    int n = cards_of(table, cards);
    t->table = table;
    t->ncards = n;
    t->ace_on_table = 0;
    t->err = 0;
    for (int i = 0; i < n; i++) {
        vals[i] = cards[i] == WILD && wild ? wild : card_value(cards[i]);
        if (vals[i] == 1) t->ace_on_table = 1;
    }
    memset(t->have, 0, sizeof t->have);
    s->nsub = 0;
    s->ncaps = 0;
    t->dp = n <= DP_MAX;
    if (t->dp) {
        memcpy(t->vals, vals, sizeof(int) * (size_t)n);
        s->dp_sum[0] = 0;
        s->dp_mask[0] = 0;
        for (int m = 1; m < 1 << n; m++) {
            int low = __builtin_ctz((unsigned)m), prev = m & (m - 1);
            s->dp_sum[m] = (uint8_t)(s->dp_sum[prev] + vals[low]);
            s->dp_mask[m] = s->dp_mask[prev] | 1ULL << cards[low];
        }
    } else if (enum_subsets(s, cards, vals, n, 0, 0, 0, 0)) {
        t->err = -1;
    }
    return t->err;
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
    if (!t->have[v]) {
        int start = s->ncaps;
        if (v == 1 && t->ncards && !t->ace_on_table) {
            if (grow((void **)&s->caps, &s->caps_cap, s->ncaps + 1, sizeof(u64))) return NULL;
            s->caps[s->ncaps++] = t->table; /* the ace sweep: its only capture */
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
        t->have[v] = 1;
        t->start[v] = start;
        t->len[v] = s->ncaps - start;
    }
    static const u64 none[1] = {0};
    *len = t->len[v];
    return s->caps ? s->caps + t->start[v] : none; /* NULL only for a memory error */
}

/* ------------------------------------------------------------------ declarations (actions.py) */

/* Declaration codes of a 3-card hand, ascending (declaration_codes). */
static int decl_codes(u64 hand, int *out) {
    int cards[NUM_CARDS];
    if (cards_of(hand, cards) != 3) return 0;
    int others[3], k = 0;
    for (int i = 0; i < 3; i++)
        if (cards[i] != WILD) others[k++] = card_value(cards[i]);
    int n = 0;
    int lo = k == 2 ? 1 : 0, hi = k == 2 ? 10 : 0;
    int low[10], three[10], nl = 0, nt = 0;
    for (int w = lo; w <= hi; w++) {
        int a = others[0], b = others[1], c = k == 2 ? w : others[2];
        if (a == b && b == c)
            three[nt++] = 2 << 4 | w;
        else if (a + b + c <= 9)
            low[nl++] = 1 << 4 | w;
    }
    for (int i = 0; i < nl; i++) out[n++] = low[i];
    for (int i = 0; i < nt; i++) out[n++] = three[i];
    return n;
}

/* ------------------------------------------------------------------ legal actions (game.py) */

/* Game.legal_codes into s->codes; the table entry t must be for (table, wild). */
static int legal_codes(Scratch *s, Tab *t, u64 hand, int wild, int must, int pp) {
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
    int run = 0;
    for (int value = 1; value <= piccola_max; value++) {
        if (!(m >> ((value - 1) * 4) & 1)) break;
        run = value;
    }
    return run >= 3 ? run : 0;
}

/* score_deal: items per side, and the cappotto side (-1: none). */
static int score_deal(const Opts *o, int sides, const u64 *captured, const int *scope,
                      int items[][S_ITEMS]) {
    int n_cards[MAX_PLAYERS], n_coins[MAX_PLAYERS], prim[MAX_PLAYERS];
    for (int i = 0; i < sides; i++) {
        u64 m = captured[i];
        n_cards[i] = popc(m);
        n_coins[i] = popc(m & COINS_MASK);
        int total = 0, complete = 1;
        for (int suit = 0; suit < 4; suit++) {
            u64 sm = m & SUIT_MASK[suit];
            if (!sm) {
                complete = 0;
                continue;
            }
            int best = 0;
            while (sm) {
                int c = __builtin_ctzll(sm);
                if (PRIMIERA_POINTS[c] > best) best = PRIMIERA_POINTS[c];
                sm &= sm - 1;
            }
            total += best;
        }
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
    int base = 0, cards[NUM_CARDS];
    int n = cards_of(table, cards);
    for (int i = 0; i < n; i++)
        if (cards[i] != WILD) base += card_value(cards[i]);
    int wild = (int)(table >> WILD & 1), best = 0;
    for (int w = wild ? 1 : 0; w <= (wild ? 10 : 0); w++) {
        int s = base + w;
        int bonus = s == 15 ? 1 : s == 30 ? 2 : low_bonus && s <= 9 ? 3 : 0;
        if (bonus > best) best = bonus;
    }
    return best;
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
    g->dealer = (g->dealer + 1) % n;
    int dealer = g->dealer;
    for (;;) {
        if (g->deck(g->deck_ctx, g->deal_no, deck)) return -1;
        memset(g->hands, 0, sizeof g->hands);
        for (int k = 0; k < 3 * n; k++) g->hands[(dealer + 1 + k) % n] |= 1ULL << deck[k];
        table = 0;
        for (int k = 3 * n; k < 3 * n + 4; k++) table |= 1ULL << deck[k];
        if (popc(table & ACES) < 2) break;
        EMIT(g, EV_REDEAL, g->deal_no, dealer, (long long)table);
    }
    g->table = table;
    g->nstock = NUM_CARDS - 3 * n - 4;
    for (int j = 0; j < g->nstock; j++) g->stock[j] = deck[NUM_CARDS - 1 - j];
    memset(g->captured, 0, sizeof g->captured);
    memset(g->scope, 0, sizeof g->scope);
    memset(g->declared, 0, sizeof g->declared);
    g->last_taker = -1;
    g->wild = 0;
    g->round = 1;
    g->turn = (dealer + 1) % n;
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

static int g_end_deal(G *g) { /* Game._end_deal */
    u64 leftover = g->table;
    int taker = g->last_taker;
    if (taker >= 0) {
        g->captured[taker] |= leftover;
        g->table = 0;
    }
    g->score_cappotto = score_deal(&g->o, g->sides, g->captured, g->scope, g->score);
    g->has_score = 1;
    for (int i = 0; i < g->sides; i++) {
        int t = 0;
        for (int k = 0; k < S_ITEMS; k++) t += g->score[i][k];
        g->totals[i] += t;
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

static int g_deal_round(G *g) { /* Game._deal_round */
    int n = g->n, first = g->dealer + 1;
    for (int k = 0; k < 3 * n; k++) g->hands[(first + k) % n] |= 1ULL << g->stock[--g->nstock];
    g->in_hands = 3 * n;
    g->round++;
    EMIT(g, EV_ROUND_DEALT, g->round, n, g->nstock);
    if (g->emit && emit_hands(g, g->round)) return -1;
    return 0;
}

static inline int ace_on_table(u64 table, int wild) {
    return (table & ACES) || (wild == 1 && (table >> WILD & 1));
}

/* Game._play: an action code from legal_codes, unchecked. */
static int g_play(G *g, u64 code) {
    int seat = g->turn, side = g->side_of[seat];
    int card = (int)(code & 63);
    u64 capture = code >> 12;
    if (code & 0xFC0) {
        int decl = (int)(code >> 6 & 63);
        if (decl & 15) g->wild = decl & 15;
        int points = decl >> 4 == 2 ? 10 : 3;
        g->scope[side] += points;
        g->declared[seat] = g->hands[seat];
        EMIT(g, EV_DECLARED, seat, side, decl >> 4, (long long)g->hands[seat], decl & 15, points);
    }
    u64 bit = 1ULL << card;
    g->hands[seat] ^= bit;
    g->declared[seat] &= ~bit;
    int in_hands = --g->in_hands;
    int value = card == WILD && g->wild ? g->wild : card_value(card);
    int scopa = 0, sweep = 0;
    if (capture) {
        u64 table = g->table;
        if (value == 1 && capture == table && !ace_on_table(table, g->wild)) sweep = 1;
        g->table = table ^= capture;
        g->captured[side] |= capture | bit;
        g->last_taker = side;
        if (!table && (in_hands || g->nstock)) {
            scopa = !sweep || g->o.ace_sweep_scopa;
            if (scopa) g->scope[side]++;
        }
    } else {
        g->table |= bit;
    }
    EMIT(g, EV_CARD_PLAYED, seat, side, card, value, (long long)capture, scopa, sweep);
    g->turn = seat + 1 < g->n ? seat + 1 : 0;
    if (!in_hands) return g->nstock ? g_deal_round(g) : g_end_deal(g);
    return 0;
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

/* ------------------------------------------------------------------ inference (bots/cirulla/bots/inference.py) */

/* inference.Evidence: an observed play of ``seat`` reduced to what a hidden hand contradicts. */
typedef struct {
    int seat, declare;
    u64 bad, extra;
} Obs;

typedef struct {
    const Obs *v;
    int n, tries;
    double infer; /* rejection probability per contradicted observation (0: off) */
    const u64 *hands; /* posterior "replay": candidate hidden hands of seat ``hseat`` */
    int nhands, hseat;
} Infer;

/* inference.violations: how many observations the world's hidden hands contradict. */
static int violations(const G *g, const Obs *obs, int nobs) {
    int k = 0, dc[10];
    for (int i = 0; i < nobs; i++) {
        const Obs *e = &obs[i];
        u64 hidden = g->hands[e->seat] & ~g->declared[e->seat];
        if ((hidden & e->bad) || (e->declare && decl_codes(hidden | e->extra, dc))) k++;
    }
    return k;
}

/* views.sample_world with ``hidden``: seat ``hseat`` holds one of the candidate hands (drawn
   uniformly; no draw when there is one), the other unseen cards are dealt as usual. */
static void world_sample_hands(const World *w, G *g, Rng *r, const Infer *inf) {
    uint8_t pool[NUM_CARDS];
    memcpy(g, &w->base, sizeof *g);
    u64 hand = inf->hands[inf->nhands > 1 ? rng_below(r, (uint32_t)inf->nhands) : 0];
    int n = 0;
    for (int i = 0; i < w->nunseen; i++)
        if (!(hand >> w->unseen[i] & 1)) pool[n++] = w->unseen[i];
    shuffle(pool, n, r);
    g->hands[inf->hseat] |= hand;
    deal_pool(w, g, pool, inf->hseat);
}

/* inference.sample_consistent: resample while a contradicted observation rejects the world
   (each with probability ``infer``), at most ``tries`` worlds; the last one is kept. With
   candidate hands (posterior "replay"), one of them instead, and no rejection. */
static void world_sample_consistent(const World *w, G *g, Rng *r, const Infer *inf) {
    if (inf->nhands) {
        world_sample_hands(w, g, r, inf);
        return;
    }
    world_sample(w, g, r);
    if (!inf->n || inf->infer <= 0) return;
    for (int t = 1; t < inf->tries; t++) {
        int k = violations(g, inf->v, inf->n), reject = 0;
        for (int j = 0; j < k && !reject; j++)
            if (rng_unit(r) < inf->infer) reject = 1;
        if (!reject) return;
        world_sample(w, g, r);
    }
}

/* ------------------------------------------------------------------ playouts (heuristic.py) */

typedef struct {
    double worth[NUM_CARDS]; /* heuristic.STATIC_WORTH */
    double scopa;            /* heuristic.SCOPA_POINT */
    double epsilon;
    int blind;               /* sweep risk from the mover's knowledge, not the next hand */
    int reply;               /* risk: the next player's best capture, not only a sweep */
    int expand_best;         /* expand the untried action the heuristic rates best */
} Playout;

/* heuristic.sweep_values: bit v set if a card of value v takes the whole (non-empty) table. */
static int sweep_values(u64 table, int named) {
    int sum = 0, ace = 0, cards[NUM_CARDS];
    int n = cards_of(table, cards);
    for (int i = 0; i < n; i++) {
        int x = cards[i] == WILD && named ? named : card_value(cards[i]);
        sum += x;
        if (x == 1) ace = 1;
    }
    int bits = ace ? 0 : 1 << 1;
    if (sum >= 1 && sum <= 10) bits |= 1 << sum;
    if (sum >= 5 && sum <= 14) bits |= 1 << (15 - sum);
    return bits;
}

/* heuristic.blind_risk: the chance that the next player, holding ``hidden`` cards drawn
   from the mover's ``nunseen`` unseen ones (``count[v]`` of value v) plus his declared
   ``known`` values, holds a value in ``bits``. */
static double blind_risk(int bits, const int *count, int nunseen, int hidden, int known) {
    if (bits & known) return 1.0;
    int k = 0;
    for (int v = 1; v <= 10; v++)
        if (bits >> v & 1) k += count[v];
    if (!k || !nunseen) return 0.0;
    double miss = 1.0;
    for (int i = 0; i < hidden && i < nunseen; i++) {
        double f = (double)(nunseen - k - i) / (double)(nunseen - i);
        miss *= f > 0.0 ? f : 0.0;
    }
    return 1.0 - miss;
}

static inline double worth_of(const Playout *p, u64 m) {
    double w = 0.0;
    while (m) {
        w += p->worth[__builtin_ctzll(m)];
        m &= m - 1;
    }
    return w;
}


/* What the mover weighs besides the cards he takes (heuristic.Mover). */
typedef struct {
    u64 table;
    int more, blind, reply, pp, nnext, next[NUM_CARDS]; /* sighted: the next player's hand */
    int count[11], nunseen, hidden, known;    /* blind: what the mover cannot see */
} Mover;

static void mover_init(const G *g, const Playout *p, Mover *mv) {
    int seat = g->turn;
    mv->table = g->table;
    mv->more = g->in_hands > 1 || g->nstock;
    mv->blind = p->blind;
    mv->reply = p->reply;
    mv->pp = g->o.pairing_precedence;
    mv->nnext = mv->nunseen = mv->hidden = mv->known = 0;
    memset(mv->count, 0, sizeof mv->count);
    int nxt = (seat + 1) % g->n;
    if (p->blind) {
        u64 seen = g->hands[seat] | g->table;
        for (int s2 = 0; s2 < g->sides; s2++) seen |= g->captured[s2];
        for (int s2 = 0; s2 < g->n; s2++) seen |= g->declared[s2];
        int uc[NUM_CARDS];
        mv->nunseen = cards_of(ALL_CARDS & ~seen, uc);
        for (int i = 0; i < mv->nunseen; i++)
            mv->count[uc[i] == WILD && g->wild ? g->wild : card_value(uc[i])]++;
        int dc[NUM_CARDS], nd = cards_of(g->declared[nxt], dc);
        for (int i = 0; i < nd; i++)
            mv->known |= 1 << (dc[i] == WILD && g->wild ? g->wild : card_value(dc[i]));
        if (g->in_hands > 1)
            mv->hidden = popc(g->hands[nxt]) - nd;
        else if (g->nstock)
            mv->hidden = 3; /* a new round is dealt before the next player moves */
    } else if (g->in_hands > 1) {
        mv->nnext = cards_of(g->hands[nxt], mv->next);
    }
}

/* heuristic.Mover.gain: the worth of what the card takes (a sweep counts a scopa), or minus
   its own worth when it stays on the table. */
static inline double cand_gain(const Mover *mv, const Playout *p, int card, u64 m) {
    u64 bit = 1ULL << card;
    return m ? worth_of(p, m | bit) + (m == mv->table && mv->more ? p->scopa : 0.0)
             : -worth_of(p, bit);
}

#define REPLY_MAX_TABLE 10 /* heuristic.REPLY_MAX_TABLE */

/* heuristic.reply_worth: the worth of the best capture the next player's ``next`` cards
   make on ``after`` (a sweep counts a scopa); captures as in tab_caps. */
static double reply_worth(const Playout *p, u64 after, int named, int pp, const int *next,
                          int nnext) {
    int cards[NUM_CARDS], vals[NUM_CARDS], has[11] = {0}, ace = 0;
    int n = cards_of(after, cards);
    uint8_t sum[1 << REPLY_MAX_TABLE];
    double worth[1 << REPLY_MAX_TABLE];
    for (int i = 0; i < n; i++) {
        vals[i] = cards[i] == WILD && named ? named : card_value(cards[i]);
        has[vals[i]] = 1;
        if (vals[i] == 1) ace = 1;
    }
    int full = 1 << n;
    sum[0] = 0;
    worth[0] = 0.0;
    for (int m = 1; m < full; m++) {
        int low = __builtin_ctz((unsigned)m), prev = m & (m - 1);
        sum[m] = (uint8_t)(sum[prev] + vals[low]);
        worth[m] = worth[prev] + p->worth[cards[low]];
    }
    double best = 0.0;
    for (int j = 0; j < nnext; j++) {
        int c = next[j], v = c == WILD && named ? named : card_value(c);
        double wc = p->worth[c];
        if (v == 1 && !ace) { /* the ace sweep: its only capture */
            double gain = worth[full - 1] + wc + p->scopa;
            if (gain > best) best = gain;
            continue;
        }
        int adding_ok = !(pp && has[v]);
        for (int m = 1; m < full; m++) {
            int s = sum[m];
            if ((s == v && (adding_ok || !(m & (m - 1)))) || s == 15 - v) {
                double gain = worth[m] + wc + (m == full - 1 ? p->scopa : 0.0);
                if (gain > best) best = gain;
            }
        }
    }
    return best;
}

/* heuristic.Mover.risk: what leaving the table after this play may cost (the next player's
   sweep: a scopa and the table), certain or weighed by its chance (blind); with ``reply``
   the worth of the next player's best capture, whatever it takes. */
static double cand_risk(const Mover *mv, const Playout *p, int card, u64 m, int named) {
    u64 after = m ? mv->table ^ m : mv->table | 1ULL << card;
    if (!after) return 0.0;
    if (mv->reply && popc(after) <= REPLY_MAX_TABLE)
        return mv->nnext ? reply_worth(p, after, named, mv->pp, mv->next, mv->nnext) : 0.0;
    if (mv->blind) {
        if (mv->hidden <= 0 && !mv->known) return 0.0;
        return blind_risk(sweep_values(after, named), mv->count, mv->nunseen, mv->hidden,
                          mv->known) *
               (p->scopa + worth_of(p, after));
    }
    int sweeps = sweep_values(after, named);
    for (int j = 0; j < mv->nnext; j++) {
        int v = mv->next[j] == WILD && named ? named : card_value(mv->next[j]);
        if (sweeps >> v & 1) return p->scopa + worth_of(p, after);
    }
    return 0.0;
}

/* heuristic.code_score: one legal action as the playout heuristic weighs it. */
static double code_score(const Mover *mv, const Playout *p, const G *g, u64 code) {
    int card = (int)(code & 63), decl = (int)(code >> 6 & 63);
    u64 m = code >> 12;
    int named = (decl & 15) ? (decl & 15) : g->wild;
    double sc = decl ? (decl >> 4 == 2 ? 10.0 : 3.0) : 0.0;
    return sc + cand_gain(mv, p, card, m) - cand_risk(mv, p, card, m, named);
}

/* heuristic.playout_code: declare, take the most worth, avoid leaving a sweep. */
static int playout_code(Scratch *s, const G *g, Rng *r, const Playout *p, u64 *out) {
    int seat = g->turn, cards[NUM_CARDS], len;
    u64 hand = g->hands[seat];
    int nc = cards_of(hand, cards);
    int decl = 0;
    if (nc == 3) {
        int dc[10];
        int nd = decl_codes(hand, dc);
        if (nd) decl = dc[nd - 1] >> 4 == 2 ? dc[nd - 1] : dc[0];
    }
    int named = (decl & 15) ? (decl & 15) : g->wild;
    u64 table = g->table;
    int pp = g->o.pairing_precedence, must = g->o.must_capture;
    Tab t;
    if (tab_init(s, &t, table, g->wild)) return -1;
    if (rng_unit(r) < p->epsilon) {
        int card = cards[rng_below(r, (uint32_t)nc)];
        const u64 *sets = tab_caps(s, &t, card == WILD && named ? named : card_value(card), pp, &len);
        if (!sets) return -1;
        if (!len || (!must && rng_unit(r) < 0.2)) {
            *out = (u64)card | (u64)decl << 6;
        } else {
            *out = (u64)card | (u64)decl << 6 | sets[rng_below(r, (uint32_t)len)] << 12;
        }
        return 0;
    }
    Mover mv;
    mover_init(g, p, &mv);
    double best = -1e9;
    u64 best_code = 0;
    for (int i = 0; i < nc; i++) {
        int card = cards[i];
        int v = card == WILD && named ? named : card_value(card);
        const u64 *sets = tab_caps(s, &t, v, pp, &len);
        if (!sets) return -1;
        int k_end = len + (!len || !must);
        for (int k = 0; k < k_end; k++) {
            u64 m = k < len ? s->caps[t.start[v] + k] : 0;
            double sc = cand_gain(&mv, p, card, m);
            if (sc <= best) continue; /* a risk can only lower it */
            sc -= cand_risk(&mv, p, card, m, named);
            if (sc > best) {
                best = sc;
                best_code = (u64)card | m << 12;
            }
        }
    }
    *out = best_code | (u64)decl << 6;
    return 0;
}

/* ------------------------------------------------------------------ ISMCTS (bots/cirulla/bots/mcts.py) */

typedef struct {
    u64 code;
    int32_t first, next; /* first child, next sibling (-1: none) */
    int32_t visits, avail, side;
    double total;
} Node;

typedef struct {
    Node *v;
    int n, cap;
} Tree;

static int new_node(Tree *t, int parent, u64 code, int side) {
    if (t->n >= t->cap && grow((void **)&t->v, &t->cap, t->n + 1, sizeof(Node))) return -1;
    int i = t->n++;
    Node *x = &t->v[i];
    x->code = code;
    x->first = -1;
    x->visits = 0;
    x->avail = 1;
    x->side = side;
    x->total = 0.0;
    if (parent >= 0) {
        x->next = t->v[parent].first;
        t->v[parent].first = i;
    } else {
        x->next = -1;
    }
    return i;
}

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

typedef struct {
    double c, point_scale, win_weight;
    long long iterations; /* < 0: no iteration budget */
    double seconds;       /* < 0: no time budget */
    u64 seed;
    int halving;          /* root: 0 UCB with progressive bias, 1 sequential halving */
    int cpu_clock;        /* the time budget counts this thread's CPU time, not wall time */
    Infer inf;            /* opponent-hand inference in the determinization */
    int depth;            /* tree plies at most, the root action included (0: no limit) */
    int opp_playout;      /* other sides move in the tree by the playout policy, not UCB */
    int opp_blind;        /* ... and, in the tree and the playouts, by the blind policy */
    int chance;           /* reward "win": a deal not ending the game counts its win chance */
    double deal_mean, deal_sd; /* the win-chance model (mcts.DEAL_MEAN, mcts.DEAL_SD) */
    int solve;            /* 2 players: the last round of every playout solved exactly */
} SearchParams;

/* The rank of root action i among the survivors: better mean first, ties to the earlier. */
static int better_mean(const Tree *t, const int *root_child, int i, int j) {
    const Node *a = &t->v[root_child[i]], *b = &t->v[root_child[j]];
    double ma = a->total / a->visits, mb = b->total / b->visits;
    return ma > mb || (ma == mb && i < j);
}

/* mcts.halving_rounds: how many halvings take k actions down to one. */
static int halving_rounds(int k) {
    int r = 0;
    while ((1 << r) < k) r++;
    return r;
}

/* mcts.win_chance */
static double win_chance(const G *g, const SearchParams *sp, int side) {
    int need = g->o.target - g->totals[side], other = 1000000;
    if (need < 0) need = 0;
    for (int s = 0; s < g->sides; s++) {
        if (s == side) continue;
        int n = g->o.target - g->totals[s];
        if (n < 0) n = 0;
        if (n < other) other = n;
    }
    double left = (need + other) / (2 * sp->deal_mean);
    left = left < 0.5 ? 0.5 : left;
    double x = (other - need) / (sp->deal_sd * sqrt(left));
    return 0.5 * (1.0 + erf(x / sqrt(2.0)));
}

/* mcts.rewards_of */
static void rewards(const G *g, const SearchParams *sp, double *out) {
    int pts[MAX_PLAYERS];
    for (int i = 0; i < g->sides; i++) {
        pts[i] = 0;
        for (int k = 0; k < S_ITEMS; k++) pts[i] += g->score[i][k];
    }
    for (int side = 0; side < g->sides; side++) {
        int other = -1000000;
        for (int s = 0; s < g->sides; s++)
            if (s != side && pts[s] > other) other = pts[s];
        double r = 0.5 + (pts[side] - other) / (2 * sp->point_scale);
        r = r < 0.0 ? 0.0 : r > 1.0 ? 1.0 : r;
        if (g->winner >= 0)
            r = (1 - sp->win_weight) * r + sp->win_weight * (g->winner == side);
        else if (sp->chance)
            r = (1 - sp->win_weight) * r + sp->win_weight * win_chance(g, sp, side);
        out[side] = r;
    }
}

/* mcts.solve_rest: the rest of a 2-player deal once the stock is empty, every card
   known in this world: the searcher's side plays the move of best reward for it, the
   other the playout policy ``popp`` (epsilon 0). Leaves the deal's end in ``leaf``. */
static int solve_rest(Scratch *s, const G *g, const SearchParams *sp, const Playout *popp,
                      int my_side, G *leaf, double *value) {
    if (g->deal_over) {
        double rw[MAX_PLAYERS];
        rewards(g, sp, rw);
        *leaf = *g;
        *value = rw[my_side];
        return 0;
    }
    if (g->side_of[g->turn] != my_side) {
        u64 pc;
        Rng r0 = {0};
        if (playout_code(s, g, &r0, popp, &pc)) return -1;
        G c = *g;
        g_play(&c, pc);
        return solve_rest(s, &c, sp, popp, my_side, leaf, value);
    }
    Tab t;
    if (tab_init(s, &t, g->table, g->wild) ||
        legal_codes(s, &t, g->hands[g->turn], g->wild, g->o.must_capture,
                    g->o.pairing_precedence))
        return -1;
    int n = s->ncodes;
    u64 *codes = malloc(sizeof(u64) * (size_t)n);
    if (!codes) return -1;
    memcpy(codes, s->codes, sizeof(u64) * (size_t)n);
    double best = -1e18;
    for (int i = 0; i < n; i++) {
        G c = *g, l;
        double v;
        g_play(&c, codes[i]);
        if (solve_rest(s, &c, sp, popp, my_side, &l, &v)) {
            free(codes);
            return -1;
        }
        if (v > best) { /* ties to the earlier legal action */
            best = v;
            *leaf = l;
        }
    }
    free(codes);
    *value = best;
    return 0;
}

/* mcts.search: root children in ``order`` with progressive bias ``bias``; returns the
   iterations done (or -1 on a memory error), root visits aligned with ``order``. */
static long long search_run(const World *w, const u64 *order, const double *bias, int norder,
                            const SearchParams *sp, const Playout *pl, int *visits_out,
                            double *totals_out, int *survived_out, double *elapsed) {
    Scratch s = {0};
    Tree tree = {0};
    u64 *seeds = NULL;
    int nseeds = 0, seeds_cap = 0;
    int *root_child = calloc((size_t)norder, sizeof(int));
    int *untried = NULL, untried_cap = 0;
    long long done = -1;
    Rng rng = {sp->seed};
    int my_side = w->base.side_of[w->base.turn];
    double (*clock)(void) = sp->cpu_clock ? cpu_seconds : now_seconds;
    double start = clock();
    double deadline = sp->seconds >= 0 ? start + sp->seconds : INFINITY;
    /* Sequential halving (mcts.py, ``root="halving"``): survivors in rank order, every
       survivor plays world k before any plays world k + 1, the worse half is dropped when
       the phase's world count is reached. */
    int *surv = calloc((size_t)norder, sizeof(int)), nsurv = norder, pos = 0;
    int rounds = halving_rounds(norder);
    long long world_k = 0, phase_end = -1, per_phase = 0;
    long long limit = sp->iterations >= 0 ? sp->iterations : (1LL << 62);
    int nroot = 0, path[NUM_CARDS + 2];
    Playout pl_opp = *pl; /* mcts.py, ``opponent="blind"``: the other sides' policy */
    pl_opp.blind = 1;
    pl_opp.reply = 0;
    Playout pl_solve = sp->opp_blind ? pl_opp : *pl; /* the other side in solve_rest */
    pl_solve.epsilon = 0.0;
    G g;
    Tab t;
    if (!root_child || !surv) goto out;
    for (int i = 0; i < norder; i++) {
        surv[i] = i;
        root_child[i] = -1;
        survived_out[i] = 0;
    }
    done = 0;
    while (done < limit) {
        if (!(done & 3) && done && clock() >= deadline) break;
        int expanded = nroot < norder, node;
        u64 code;
        if (sp->halving && norder > 1) {
            int i = surv[pos];
            expanded = world_k == 0;
            if (expanded) {
                node = new_node(&tree, -1, order[i], my_side);
                if (node < 0) goto fail;
                root_child[i] = node;
                nroot++;
            }
            node = root_child[i];
            code = order[i];
        } else if (expanded) {
            node = new_node(&tree, -1, order[nroot], my_side);
            if (node < 0) goto fail;
            root_child[nroot++] = node;
            code = order[nroot - 1];
        } else {
            double log_n = log((double)done), best_value = -1e9;
            int best = 0;
            for (int i = 0; i < norder; i++) {
                Node *x = &tree.v[root_child[i]];
                double value = x->total / x->visits + sp->c * sqrt(log_n / x->visits) +
                               bias[i] / (x->visits + 1);
                if (value > best_value) {
                    best_value = value;
                    best = i;
                }
            }
            node = root_child[best];
            code = order[best];
        }
        int k = tree.v[node].visits;
        while (nseeds <= k) {
            if (grow((void **)&seeds, &seeds_cap, nseeds + 1, sizeof(u64))) goto fail;
            seeds[nseeds++] = rng_next(&rng);
        }
        Rng r = {seeds[k]};
        world_sample_consistent(w, &g, &r, &sp->inf);
        g_play(&g, code);
        int plen = 0;
        path[plen++] = node;
        while (!expanded && !g.deal_over && (!sp->depth || plen < sp->depth)) {
            if (sp->opp_playout && g.side_of[g.turn] != my_side) {
                /* mcts.py, ``opponent="playout"``: the other side's move is the playout
                   policy's; its edge is followed (or made) without ending the descent. */
                u64 pc;
                if (playout_code(&s, &g, &r, sp->opp_blind ? &pl_opp : pl, &pc)) goto fail;
                int ch = tree.v[node].first;
                while (ch >= 0 && tree.v[ch].code != pc) ch = tree.v[ch].next;
                if (ch < 0 && (ch = new_node(&tree, node, pc, g.side_of[g.turn])) < 0) goto fail;
                g_play(&g, pc);
                path[plen++] = ch;
                node = ch;
                continue;
            }
            if (tab_init(&s, &t, g.table, g.wild) ||
                legal_codes(&s, &t, g.hands[g.turn], g.wild, g.o.must_capture,
                            g.o.pairing_precedence))
                goto fail;
            if (grow((void **)&untried, &untried_cap, s.ncodes, sizeof(int))) goto fail;
            int nu = 0;
            for (int i = 0; i < s.ncodes; i++) {
                int ch = tree.v[node].first;
                while (ch >= 0 && tree.v[ch].code != s.codes[i]) ch = tree.v[ch].next;
                if (ch < 0)
                    untried[nu++] = i;
                else
                    tree.v[ch].avail++;
            }
            if (nu) {
                int pick = untried[0];
                if (pl->expand_best && nu > 1) {
                    Mover mv;
                    mover_init(&g, pl, &mv);
                    double best_score = -1e18;
                    for (int i = 0; i < nu; i++) {
                        double sc = code_score(&mv, pl, &g, s.codes[untried[i]]);
                        if (sc > best_score) {
                            best_score = sc;
                            pick = untried[i];
                        }
                    }
                } else if (nu > 1) {
                    pick = untried[rng_below(&r, (uint32_t)nu)];
                }
                u64 pcode = s.codes[pick];
                int child = new_node(&tree, node, pcode, g.side_of[g.turn]);
                if (child < 0) goto fail;
                g_play(&g, pcode);
                path[plen++] = child;
                break;
            }
            int best_child = -1;
            double best_value = -1e9;
            for (int i = 0; i < s.ncodes; i++) {
                int ch = tree.v[node].first;
                while (tree.v[ch].code != s.codes[i]) ch = tree.v[ch].next;
                Node *x = &tree.v[ch];
                double value =
                    x->total / x->visits + sp->c * sqrt(log((double)x->avail) / x->visits);
                if (value > best_value) {
                    best_value = value;
                    best_child = ch;
                }
            }
            g_play(&g, tree.v[best_child].code);
            path[plen++] = best_child;
            node = best_child;
        }
        while (!g.deal_over) {
            u64 pc;
            if (sp->solve && g.n == 2 && !g.nstock) {
                G leaf;
                double v;
                if (solve_rest(&s, &g, sp, &pl_solve, my_side, &leaf, &v)) goto fail;
                g = leaf;
                break;
            }
            const Playout *mover = sp->opp_blind && g.side_of[g.turn] != my_side ? &pl_opp : pl;
            if (playout_code(&s, &g, &r, mover, &pc)) goto fail;
            g_play(&g, pc);
        }
        double rw[MAX_PLAYERS];
        rewards(&g, sp, rw);
        for (int i = 0; i < plen; i++) {
            Node *x = &tree.v[path[i]];
            x->visits++;
            x->total += rw[x->side];
        }
        done++;
        if (sp->halving && norder > 1 && ++pos == nsurv) {
            pos = 0;
            world_k++;
            if (phase_end < 0) {
                /* After one world for every action: the budget in iterations, from the
                   iteration limit and/or the time spent on this first world. */
                long long budget = limit;
                if (sp->seconds >= 0) {
                    double spent = clock() - start;
                    double est = spent > 0 ? (double)norder * sp->seconds / spent : 1e18;
                    if (est < (double)budget) budget = (long long)est;
                }
                per_phase = budget / rounds;
                if (per_phase < norder) per_phase = norder;
                phase_end = per_phase / norder;
            }
            if (world_k >= phase_end) {
                for (int a = 1; a < nsurv; a++) /* insertion sort: survivors by mean */
                    for (int b = a; b > 0 && better_mean(&tree, root_child, surv[b], surv[b - 1]);
                         b--) {
                        int tmp = surv[b];
                        surv[b] = surv[b - 1];
                        surv[b - 1] = tmp;
                    }
                nsurv = (nsurv + 1) / 2;
                for (int a = 0; a < nsurv; a++) survived_out[surv[a]]++;
                if (nsurv == 1) break;
                long long more = per_phase / nsurv;
                phase_end = world_k + (more > 1 ? more : 1);
            }
        }
    }
    for (int i = 0; i < norder; i++) {
        visits_out[i] = root_child[i] >= 0 ? tree.v[root_child[i]].visits : 0;
        totals_out[i] = root_child[i] >= 0 ? tree.v[root_child[i]].total : 0.0;
    }
    goto out;
fail:
    done = -1;
out:
    *elapsed = clock() - start;
    free(surv);
    free(root_child);
    free(untried);
    free(seeds);
    free(tree.v);
    scratch_free(&s);
    return done;
}

/* ------------------------------------------------------------------ random-play benchmark */

static int rng_deck(void *ctx, int deal_no, uint8_t *deck) {
    (void)deal_no;
    for (int i = 0; i < NUM_CARDS; i++) deck[i] = (uint8_t)i;
    shuffle(deck, NUM_CARDS, (Rng *)ctx);
    return 0;
}

/* rules/cirulla/rules/bench.py:bench_rules, the whole loop in C, for ``seconds`` of CPU time. */
static int bench_run(const Opts *o, double seconds, u64 seed, long long *deals, long long *games,
                     long long *actions, double *elapsed, double *cpu) {
    Rng rng = {seed}, deck_rng = {seed ^ 0x5bd1e995ULL};
    Scratch s = {0};
    G g;
    Tab t;
    int rc = 0;
    *deals = *games = *actions = 0;
    g_init(&g, o);
    g.deck = rng_deck;
    g.deck_ctx = &deck_rng;
    g.dealer = o->players - 2;
    double start = now_seconds(), cpu_start = cpu_seconds(), deadline = cpu_start + seconds;
    g_start_deal(&g);
    for (;;) {
        int deal_no = g.deal_no;
        while (g.deal_no == deal_no && g.winner < 0) {
            if (tab_init(&s, &t, g.table, g.wild) ||
                legal_codes(&s, &t, g.hands[g.turn], g.wild, o->must_capture,
                            o->pairing_precedence)) {
                rc = -1;
                goto out;
            }
            g_play(&g, s.codes[rng_below(&rng, (uint32_t)s.ncodes)]);
            (*actions)++;
        }
        (*deals)++;
        if (g.winner >= 0) {
            (*games)++;
            g_init(&g, o);
            g.deck = rng_deck;
            g.deck_ctx = &deck_rng;
            g.dealer = o->players - 2;
            g_start_deal(&g);
        }
        if (*deals % 64 == 0 && cpu_seconds() >= deadline) break;
    }
out:
    *elapsed = now_seconds() - start;
    *cpu = cpu_seconds() - cpu_start;
    scratch_free(&s);
    return rc;
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
    Scratch s = {0};
    Tab t;
    PyObject *res = NULL;
    if (tab_init(&s, &t, table, wild) || legal_codes(&s, &t, hand, wild, must, pp))
        PyErr_NoMemory();
    else
        res = codes_list(&s);
    scratch_free(&s);
    return res;
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

/* heuristic.STATIC_WORTH as passed in: 40 floats; -1 with an exception otherwise. */
static int parse_worth(PyObject *obj, double *out) {
    PyObject *seq = PySequence_Fast(obj, "worth must be 40 floats");
    if (!seq) return -1;
    if (PySequence_Fast_GET_SIZE(seq) != NUM_CARDS) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "worth must be 40 floats");
        return -1;
    }
    for (int i = 0; i < NUM_CARDS; i++) out[i] = PyFloat_AsDouble(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    return PyErr_Occurred() ? -1 : 0;
}

/* A sequence of (seat, bad, extra, declare) tuples (inference.Evidence.as_tuple) into a
   malloc'd array (NULL when empty); -1 with an exception on bad input. */
static int parse_evidence(PyObject *obj, int players, Obs **out, int *n) {
    *out = NULL;
    *n = 0;
    PyObject *seq = PySequence_Fast(obj, "evidence must be a sequence of tuples");
    if (!seq) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len > 0) {
        *out = malloc(sizeof(Obs) * (size_t)len);
        if (!*out) {
            Py_DECREF(seq);
            PyErr_NoMemory();
            return -1;
        }
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        unsigned long long bad, extra;
        Obs *e = &(*out)[i];
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(seq, i), "iKKp", &e->seat, &bad, &extra,
                              &e->declare)) {
            free(*out);
            *out = NULL;
            Py_DECREF(seq);
            return -1;
        }
        if (e->seat < 0 || e->seat >= players) {
            free(*out);
            *out = NULL;
            Py_DECREF(seq);
            PyErr_SetString(PyExc_ValueError, "evidence: seat out of range");
            return -1;
        }
        e->bad = bad;
        e->extra = extra;
    }
    *n = (int)len;
    Py_DECREF(seq);
    return 0;
}

/* The posterior's candidate hidden hands of ``seat`` (mcts ``posterior="replay"``): each
   must be ``need[seat]`` unseen cards. An empty sequence (or none) leaves ``*n`` at 0. */
static int parse_hands(PyObject *obj, const World *w, int seat, int players, u64 **out, int *n) {
    *out = NULL;
    *n = 0;
    if (!obj || obj == Py_None) return 0;
    PyObject *seq = PySequence_Fast(obj, "hands must be a sequence of card masks");
    if (!seq) return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    if (len && (seat < 0 || seat >= players || seat == w->base.turn)) {
        Py_DECREF(seq);
        PyErr_SetString(PyExc_ValueError, "hands: the seat must be another player's");
        return -1;
    }
    u64 unseen = 0;
    for (int i = 0; i < w->nunseen; i++) unseen |= 1ULL << w->unseen[i];
    if (len) *out = malloc(sizeof(u64) * (size_t)len);
    if (len && !*out) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        u64 m = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (PyErr_Occurred() || (m & ~unseen) || popc(m) != w->need[seat]) {
            free(*out);
            *out = NULL;
            Py_DECREF(seq);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError,
                                "hands: each must be as many unseen cards as the seat hides");
            return -1;
        }
        (*out)[i] = m;
    }
    *n = (int)len;
    Py_DECREF(seq);
    return 0;
}

PyDoc_STRVAR(sample_world_doc,
             "sample_world(options, view, seed, evidence=(), infer=0.0, tries=1, hands=(), seat=-1)"
             " -> (hands, stock)\n\n"
             "views.sample_world's zones: every hand, and the stock in dealing order. With "
             "evidence and infer > 0: inference.sample_consistent, as the native search samples; "
             "with candidate hands of ``seat``: one of them for that seat, as the search does.");

static PyObject *py_sample_world(PyObject *self, PyObject *args) {
    PyObject *opts_obj, *view_obj, *ev_obj = NULL, *hands_obj = NULL;
    unsigned long long seed;
    Opts o;
    ViewIn v;
    World w;
    G g;
    Infer inf = {NULL, 0, 1, 0.0, NULL, 0, -1};
    Obs *obs;
    u64 *cand;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOK|OdiOi", &opts_obj, &view_obj, &seed, &ev_obj, &inf.infer,
                          &inf.tries, &hands_obj, &inf.hseat))
        return NULL;
    if (parse_opts(opts_obj, &o) || parse_view(view_obj, &o, &v)) return NULL;
    const char *err = world_init(&w, &o, &v);
    if (err) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    if (parse_hands(hands_obj, &w, inf.hseat, o.players, &cand, &inf.nhands)) return NULL;
    inf.hands = cand;
    if (ev_obj && parse_evidence(ev_obj, o.players, &obs, &inf.n)) {
        free(cand);
        return NULL;
    }
    if (!ev_obj) obs = NULL;
    inf.v = obs;
    Rng r = {seed};
    world_sample_consistent(&w, &g, &r, &inf);
    free(obs);
    free(cand);
    PyObject *hands = PyTuple_New(g.n), *stock = PyList_New(g.nstock);
    if (!hands || !stock) {
        Py_XDECREF(hands);
        Py_XDECREF(stock);
        return NULL;
    }
    for (int s = 0; s < g.n; s++) PyTuple_SET_ITEM(hands, s, PyLong_FromUnsignedLongLong(g.hands[s]));
    for (int j = 0; j < g.nstock; j++)
        PyList_SET_ITEM(stock, j, PyLong_FromLong(g.stock[g.nstock - 1 - j]));
    return Py_BuildValue("(NN)", hands, stock);
}

PyDoc_STRVAR(violations_doc, "violations(hands, declared, evidence) -> int\n\n"
                             "inference.violations: how many observations the hands contradict.");

static PyObject *py_violations(PyObject *self, PyObject *args) {
    PyObject *hands_obj, *decl_obj, *ev_obj;
    long long a[MAX_PLAYERS], d[MAX_PLAYERS];
    Obs *obs;
    int nobs;
    G g;
    (void)self;
    if (!PyArg_ParseTuple(args, "OOO", &hands_obj, &decl_obj, &ev_obj)) return NULL;
    Py_ssize_t n = PySequence_Size(hands_obj);
    if (n < 2 || n > MAX_PLAYERS) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "hands: 2 to 4 masks");
        return NULL;
    }
    if (get_ints(hands_obj, (int)n, a, 1, "hands") || get_ints(decl_obj, (int)n, d, 1, "declared"))
        return NULL;
    if (parse_evidence(ev_obj, (int)n, &obs, &nobs)) return NULL;
    memset(&g, 0, sizeof g);
    for (int s = 0; s < n; s++) {
        g.hands[s] = (u64)a[s];
        g.declared[s] = (u64)d[s];
    }
    int k = violations(&g, obs, nobs);
    free(obs);
    return PyLong_FromLong(k);
}

PyDoc_STRVAR(reply_worth_doc, "reply_worth(worth, scopa, after, named, pp, next_cards) -> float\n\n"
                              "heuristic.reply_worth, with the card worth table given.");

static PyObject *py_reply_worth(PyObject *self, PyObject *args) {
    PyObject *worth_obj, *next_obj;
    unsigned long long after;
    int named, pp;
    Playout pl;
    long long next[NUM_CARDS];
    int nc[NUM_CARDS];
    (void)self;
    if (!PyArg_ParseTuple(args, "OdKipO", &worth_obj, &pl.scopa, &after, &named, &pp, &next_obj))
        return NULL;
    Py_ssize_t nnext = PySequence_Size(next_obj);
    if (nnext < 0) return NULL;
    if (nnext > NUM_CARDS || after >> NUM_CARDS || popc(after) > REPLY_MAX_TABLE) {
        PyErr_SetString(PyExc_ValueError, "reply_worth: at most 40 cards and a table of 10");
        return NULL;
    }
    if (parse_worth(worth_obj, pl.worth)) return NULL;
    if (get_ints(next_obj, (int)nnext, next, 0, "next_cards")) return NULL;
    for (int i = 0; i < nnext; i++) {
        if (next[i] < 0 || next[i] >= NUM_CARDS) {
            PyErr_SetString(PyExc_ValueError, "next_cards: card codes are 0..39");
            return NULL;
        }
        nc[i] = (int)next[i];
    }
    if (PyErr_Occurred()) return NULL;
    return PyFloat_FromDouble(reply_worth(&pl, after, named, pp, nc, (int)nnext));
}

PyDoc_STRVAR(search_doc,
             "search(options, view, order, bias, seed, iterations, seconds, c, epsilon, "
             "point_scale, win_weight, worth, scopa, halving, cpu_clock, blind, expand_best, "
             "evidence, infer, tries, depth, reply, opp_playout, opp_blind, chance, "
             "deal_mean, deal_sd, solve, hands, hands_seat) -> "
             "(visits, totals, "
             "survived, iterations, seconds)\n\n"
             "mcts.search with the whole loop native; the lists are aligned with ``order``. "
             "iterations or seconds < 0 means no such budget; cpu_clock: seconds of this "
             "thread's CPU time; hands: candidate hidden hands of hands_seat, one drawn per "
             "world instead of rejecting by the evidence. Releases the GIL.");

static PyObject *py_search(PyObject *self, PyObject *args) {
    PyObject *opts_obj, *view_obj, *order_obj, *bias_obj, *worth_obj, *ev_obj;
    unsigned long long seed;
    long long iterations;
    SearchParams sp;
    Obs *obs = NULL;
    Playout pl;
    Opts o;
    ViewIn v;
    World w;
    (void)self;
    pl.reply = 0;
    sp.opp_playout = sp.opp_blind = sp.chance = sp.solve = 0;
    sp.inf.hands = NULL;
    sp.inf.nhands = 0;
    sp.inf.hseat = -1;
    PyObject *hands_obj = NULL;
    u64 *cand = NULL;
    sp.deal_mean = sp.deal_sd = 0.0; /* mcts.DEAL_MEAN and DEAL_SD: given with chance */
    if (!PyArg_ParseTuple(args, "OOOOKLdddddOdppppOdii|ppppddpOi", &opts_obj, &view_obj, &order_obj,
                          &bias_obj, &seed, &iterations, &sp.seconds, &sp.c, &pl.epsilon,
                          &sp.point_scale, &sp.win_weight, &worth_obj, &pl.scopa, &sp.halving,
                          &sp.cpu_clock, &pl.blind, &pl.expand_best, &ev_obj, &sp.inf.infer,
                          &sp.inf.tries, &sp.depth, &pl.reply, &sp.opp_playout,
                          &sp.opp_blind, &sp.chance, &sp.deal_mean, &sp.deal_sd,
                          &sp.solve, &hands_obj, &sp.inf.hseat))
        return NULL;
    if (sp.chance && !(sp.deal_mean > 0.0 && sp.deal_sd > 0.0)) {
        PyErr_SetString(PyExc_ValueError, "search: chance needs deal_mean and deal_sd > 0");
        return NULL;
    }
    sp.seed = seed;
    sp.iterations = iterations;
    if (parse_opts(opts_obj, &o) || parse_view(view_obj, &o, &v)) return NULL;
    if (v.to_move != v.seat) {
        PyErr_SetString(PyExc_ValueError, "search runs from a view of the seat to move");
        return NULL;
    }
    const char *err = world_init(&w, &o, &v);
    if (err) {
        PyErr_SetString(PyExc_ValueError, err);
        return NULL;
    }
    if (parse_worth(worth_obj, pl.worth)) return NULL;
    if (PyErr_Occurred()) return NULL;
    if (parse_hands(hands_obj, &w, sp.inf.hseat, o.players, &cand, &sp.inf.nhands)) return NULL;
    sp.inf.hands = cand;
    if (parse_evidence(ev_obj, o.players, &obs, &sp.inf.n)) {
        free(cand);
        return NULL;
    }
    sp.inf.v = obs;
    PyObject *oseq = PySequence_Fast(order_obj, "order must be a sequence of action codes");
    if (!oseq) {
        free(obs);
        free(cand);
        return NULL;
    }
    Py_ssize_t norder = PySequence_Fast_GET_SIZE(oseq);
    if (norder < 1 || PySequence_Size(bias_obj) != norder) {
        free(obs);
        free(cand);
        Py_DECREF(oseq);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "search needs root actions and one bias each");
        return NULL;
    }
    u64 *order = malloc(sizeof(u64) * (size_t)norder);
    double *bias = malloc(sizeof(double) * (size_t)norder);
    int *visits = malloc(sizeof(int) * (size_t)norder);
    int *survived = malloc(sizeof(int) * (size_t)norder);
    double *totals = malloc(sizeof(double) * (size_t)norder);
    PyObject *res = NULL;
    if (!order || !bias || !visits || !survived || !totals) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < norder; i++) {
        order[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(oseq, i));
        PyObject *b = PySequence_GetItem(bias_obj, i);
        bias[i] = b ? PyFloat_AsDouble(b) : 0.0;
        Py_XDECREF(b);
        if (PyErr_Occurred()) goto done;
    }
    long long done_it;
    double elapsed;
    Py_BEGIN_ALLOW_THREADS
    done_it = search_run(&w, order, bias, (int)norder, &sp, &pl, visits, totals, survived, &elapsed);
    Py_END_ALLOW_THREADS
    if (done_it < 0) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *vl = PyList_New(norder), *tl = PyList_New(norder), *sl = PyList_New(norder);
    if (!vl || !tl || !sl) {
        Py_XDECREF(vl);
        Py_XDECREF(tl);
        Py_XDECREF(sl);
        goto done;
    }
    for (Py_ssize_t i = 0; i < norder; i++) {
        PyList_SET_ITEM(vl, i, PyLong_FromLong(visits[i]));
        PyList_SET_ITEM(tl, i, PyFloat_FromDouble(totals[i]));
        PyList_SET_ITEM(sl, i, PyLong_FromLong(survived[i]));
    }
    res = Py_BuildValue("(NNNLd)", vl, tl, sl, done_it, elapsed);
done:
    Py_DECREF(oseq);
    free(obs);
    free(cand);
    free(survived);
    free(totals);
    free(order);
    free(bias);
    free(visits);
    return res;
}

PyDoc_STRVAR(bench_rules_doc,
             "bench_rules(options, cpu_seconds, seed) -> (deals, games, actions, wall, cpu)\n\n"
             "rules/cirulla/rules/bench.py's random-policy loop, entirely native, for cpu_seconds of CPU.");

static PyObject *py_bench_rules(PyObject *self, PyObject *args) {
    PyObject *opts_obj;
    double seconds;
    unsigned long long seed;
    Opts o;
    long long deals, games, actions;
    double elapsed, cpu;
    int rc;
    (void)self;
    if (!PyArg_ParseTuple(args, "OdK", &opts_obj, &seconds, &seed)) return NULL;
    if (parse_opts(opts_obj, &o)) return NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = bench_run(&o, seconds, seed, &deals, &games, &actions, &elapsed, &cpu);
    Py_END_ALLOW_THREADS
    if (rc) return PyErr_NoMemory();
    return Py_BuildValue("(LLLdd)", deals, games, actions, elapsed, cpu);
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

static PyMethodDef module_methods[] = {
    {"legal_codes", py_legal_codes, METH_VARARGS, legal_codes_doc},
    {"captures", py_captures, METH_VARARGS, captures_doc},
    {"declaration_codes", py_declaration_codes, METH_O,
     "declaration_codes(hand) -> tuple: actions.declaration_codes."},
    {"dealer_bonus", py_dealer_bonus, METH_VARARGS,
     "dealer_bonus(table, low_bonus) -> int: game.dealer_bonus."},
    {"score_deal", py_score_deal, METH_VARARGS, score_deal_doc},
    {"sample_world", py_sample_world, METH_VARARGS, sample_world_doc},
    {"search", py_search, METH_VARARGS, search_doc},
    {"violations", py_violations, METH_VARARGS, violations_doc},
    {"reply_worth", py_reply_worth, METH_VARARGS, reply_worth_doc},
    {"bench_rules", py_bench_rules, METH_VARARGS, bench_rules_doc},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_native",
    .m_doc = "The compiled rules core and ISMCTS loop (see rules/cirulla/rules/_native.c, docs/rules.md).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__native(void) {
    init_tables();
    if (PyType_Ready(&GameType) < 0) return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    Py_INCREF(&GameType);
    if (PyModule_AddObject(m, "Game", (PyObject *)&GameType) < 0) {
        Py_DECREF(&GameType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

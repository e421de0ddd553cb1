/*
 * cirulla.bots._search: the bots' compiled search, on their own floor. Opponent-hand
 * inference (cirulla.bots.inference), the playout policy (cirulla.bots.heuristic) and the
 * whole ISMCTS loop (cirulla.bots.mcts) run here without returning to Python per step,
 * on the rules core's state machine (rules/cirulla/rules/engine.h, included: every
 * function of it is static, so this module has its own copy and exports only itself).
 */
#include "../../../rules/cirulla/rules/engine.h"

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
    double deal_mean, deal_sd; /* the win-chance model (rewards.DEAL_MEAN, rewards.DEAL_SD) */
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

/* rewards.win_chance */
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

/* rewards.rewards_of */
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

/* rewards.solve_rest: the rest of a 2-player deal once the stock is empty, every card
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

#define EXACT_TIE 1e-9 /* endgame.EXACT_TIE: minimax values this close are equal */

/* endgame._value: both sides at their best over the rest of a 2-player deal whose cards
   are all known (alpha-beta on the search's reward, exact inside (alpha, beta)), each
   node counted in *nodes; 1 when the count passes ``limit``, -1 when out of memory. The
   children are taken bigger captures first, as the Python reference takes them. */
static int minimax(Scratch *s, const G *g, const SearchParams *sp, int side, double alpha,
                   double beta, double *value, long long *nodes, long long limit) {
    if (++*nodes > limit) return 1;
    if (g->deal_over) {
        double rw[MAX_PLAYERS];
        rewards(g, sp, rw);
        *value = rw[side];
        return 0;
    }
    Tab t;
    if (tab_init(s, &t, g->table, g->wild) ||
        legal_codes(s, &t, g->hands[g->turn], g->wild, g->o.must_capture,
                    g->o.pairing_precedence))
        return -1;
    int n = s->ncodes, maximising = g->side_of[g->turn] == side;
    u64 codes[64];
    if (n > 64) return -1;
    memcpy(codes, s->codes, sizeof(u64) * (size_t)n);
    /* Bigger captures first (a stable insertion sort): they settle the bounds sooner, and
       the value does not depend on the order. */
    for (int i = 1; i < n; i++) {
        u64 x = codes[i];
        int k = popc(x >> 12), j = i;
        for (; j > 0 && popc(codes[j - 1] >> 12) < k; j--) codes[j] = codes[j - 1];
        codes[j] = x;
    }
    double best = maximising ? -INFINITY : INFINITY;
    for (int i = 0; i < n; i++) {
        G c = *g;
        double v;
        g_play(&c, codes[i]);
        int rc = minimax(s, &c, sp, side, alpha, beta, &v, nodes, limit);
        if (rc) return rc;
        if (maximising) {
            if (v > best) best = v;
            if (best > alpha) alpha = best;
        } else {
            if (v < best) best = v;
            if (best < beta) beta = best;
        }
        if (alpha >= beta) break;
    }
    *value = best;
    return 0;
}

/* The arguments both 2-player solvers share: the options, a view of the seat to move in
   a 2-player game (its world), and 1 to 64 action codes. Sets a Python error on failure. */
static int parse_solver(const char *who, PyObject *opts_obj, PyObject *view_obj,
                        PyObject *codes_obj, Opts *o, ViewIn *v, World *w, u64 *codes,
                        Py_ssize_t *n) {
    if (parse_opts(opts_obj, o) || parse_view(view_obj, o, v)) return -1;
    if (o->players != 2 || v->to_move != v->seat) {
        PyErr_Format(PyExc_ValueError, "%s: a 2-player view of the seat to move", who);
        return -1;
    }
    const char *err = world_init(w, o, v);
    if (err) {
        PyErr_SetString(PyExc_ValueError, err);
        return -1;
    }
    PyObject *seq = PySequence_Fast(codes_obj, "codes must be a sequence of action codes");
    if (!seq) return -1;
    *n = PySequence_Fast_GET_SIZE(seq);
    if (*n < 1 || *n > 64) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s: 1 to 64 codes", who);
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n; i++)
        codes[i] = PyLong_AsUnsignedLongLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    return PyErr_Occurred() ? -1 : 0;
}

PyDoc_STRVAR(best_exact_doc,
             "best_exact(options, view, codes, point_scale, win_weight, worth, scopa) -> int\n\n"
             "endgame.best_exact: the index in codes of the move of best minimax value for "
             "the view's side; among equal values, the best against the playout policy "
             "(solve_rest), then the earliest. The view must know every card (2 players, "
             "no stock).");

static PyObject *py_best_exact(PyObject *self, PyObject *args) {
    PyObject *opts_obj, *view_obj, *codes_obj, *worth_obj;
    SearchParams sp;
    Playout pl;
    Opts o;
    ViewIn v;
    World w;
    G g;
    (void)self;
    memset(&sp, 0, sizeof sp);
    memset(&pl, 0, sizeof pl); /* the playout policy without random moves, as solve_rest */
    if (!PyArg_ParseTuple(args, "OOOddOd", &opts_obj, &view_obj, &codes_obj, &sp.point_scale,
                          &sp.win_weight, &worth_obj, &pl.scopa))
        return NULL;
    if (parse_worth(worth_obj, pl.worth)) return NULL;
    u64 codes[64];
    Py_ssize_t n;
    if (parse_solver("best_exact", opts_obj, view_obj, codes_obj, &o, &v, &w, codes, &n))
        return NULL;
    Rng r = {0};
    world_sample(&w, &g, &r); /* no stock: the only world there is */
    int side = g.side_of[g.turn], best = 0, failed = 0;
    Scratch s = {0};
    double top = -INFINITY, values[64];
    long long nodes = 0;
    Py_BEGIN_ALLOW_THREADS
    /* Each move's exact value where it can tie the best so far (a window just below it);
       a worse move fails low, under the window, and is no candidate. */
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        G c = g;
        g_play(&c, codes[i]);
        if (minimax(&s, &c, &sp, side, top - EXACT_TIE, INFINITY, &values[i], &nodes, LLONG_MAX))
            failed = 1;
        else if (values[i] > top)
            top = values[i];
    }
    double model = -INFINITY;
    for (Py_ssize_t i = 0; i < n && !failed; i++) {
        if (values[i] < top - EXACT_TIE / 2) continue;
        G c = g, leaf;
        double value;
        g_play(&c, codes[i]);
        if (solve_rest(&s, &c, &sp, &pl, side, &leaf, &value))
            failed = 1;
        else if (value > model) {
            model = value;
            best = (int)i;
        }
    }
    Py_END_ALLOW_THREADS
    scratch_free(&s);
    if (failed) return PyErr_NoMemory();
    return PyLong_FromLong(best);
}

PyDoc_STRVAR(sampled_exact_doc,
             "sampled_exact(options, view, codes, seed, worlds, point_scale, win_weight, "
             "max_nodes) -> (values, worlds_done, nodes)\n\n"
             "endgame.sampled_values: each code's minimax reward for the view's side, "
             "averaged over worlds sampled as the search samples them, as many as fit "
             "max_nodes minimax nodes (0: no budget) up to ``worlds``; a world that would pass "
             "the budget is dropped, so values is empty when none fits. 2 players.");

static PyObject *py_sampled_exact(PyObject *self, PyObject *args) {
    PyObject *opts_obj, *view_obj, *codes_obj;
    unsigned long long seed;
    int worlds;
    long long max_nodes, nodes = 0;
    SearchParams sp;
    Opts o;
    ViewIn v;
    World w;
    G g;
    (void)self;
    memset(&sp, 0, sizeof sp);
    if (!PyArg_ParseTuple(args, "OOOKiddL", &opts_obj, &view_obj, &codes_obj, &seed, &worlds,
                          &sp.point_scale, &sp.win_weight, &max_nodes))
        return NULL;
    if (worlds < 1) {
        PyErr_SetString(PyExc_ValueError, "sampled_exact: worlds must be at least 1");
        return NULL;
    }
    u64 codes[64];
    Py_ssize_t n;
    if (parse_solver("sampled_exact", opts_obj, view_obj, codes_obj, &o, &v, &w, codes, &n))
        return NULL;
    Rng r = {seed};
    int failed = 0, done = 0;
    long long limit = max_nodes > 0 ? max_nodes : LLONG_MAX;
    Scratch s = {0};
    double sums[64] = {0};
    Py_BEGIN_ALLOW_THREADS
    /* Whole worlds only, every code on each: one that would pass the budget is dropped
       (even the first: then no world is done, and the caller decides otherwise). */
    while (done < worlds) {
        double part[64];
        int rc = 0;
        world_sample(&w, &g, &r); /* as sample_world with no evidence samples it */
        int side = g.side_of[g.turn];
        for (Py_ssize_t i = 0; i < n && !rc; i++) {
            G c = g;
            g_play(&c, codes[i]);
            rc = minimax(&s, &c, &sp, side, -INFINITY, INFINITY, &part[i], &nodes, limit);
        }
        if (rc) {
            failed = rc < 0;
            break;
        }
        for (Py_ssize_t i = 0; i < n; i++) sums[i] += part[i];
        done++;
        if (nodes >= limit) break;
    }
    Py_END_ALLOW_THREADS
    scratch_free(&s);
    if (failed) return PyErr_NoMemory();
    PyObject *out = PyList_New(done ? n : 0);
    if (!out) return NULL;
    for (Py_ssize_t i = 0; done && i < n; i++)
        PyList_SET_ITEM(out, i, PyFloat_FromDouble(sums[i] / done));
    return Py_BuildValue("(NiL)", out, done, nodes);
}

PyDoc_STRVAR(sample_world_doc,
             "sample_world(options, view, seed, evidence=(), infer=0.0, tries=1, hands=(), seat=-1)"
             " -> (hands, stock)\n\n"
             "The search's sampler: every hand, and the stock in dealing order. With "
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
    return zones_tuple(&g);
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
             "search(args) -> (visits, totals, survived, iterations, seconds)\n\n"
             "mcts.search with the whole loop native, on one compiled.NativeSearch: its "
             "fields are read by name (search_names); the lists are aligned with ``order``. "
             "iterations or seconds < 0 means no such budget; cpu_clock: seconds of this "
             "thread's CPU time; hands: candidate hidden hands of hands_seat, one drawn per "
             "world instead of rejecting by the evidence. Releases the GIL.");

/* The fields of compiled.NativeSearch the search reads, in the order of search_format's
   units (tests/bots/test_native_search.py holds the two to the dataclass). */
static char *search_names[] = {
    "options", "view",       "order",     "bias",      "seed",        "iterations",
    "seconds", "c",          "epsilon",   "point_scale", "win_weight", "worth",
    "scopa",   "halving",    "cpu_clock", "blind",     "expand_best", "evidence",
    "infer",   "tries",      "depth",     "reply",     "opp_playout", "opp_blind",
    "chance",  "deal_mean",  "deal_sd",   "solve",     "hands",       "hands_seat",
    NULL};

static PyObject *search_keywords(PyObject *args, PyObject *kwargs) {
    PyObject *opts_obj, *view_obj, *order_obj, *bias_obj, *worth_obj, *ev_obj;
    unsigned long long seed;
    long long iterations;
    SearchParams sp;
    Obs *obs = NULL;
    Playout pl;
    Opts o;
    ViewIn v;
    World w;
    pl.reply = 0;
    sp.opp_playout = sp.opp_blind = sp.chance = sp.solve = 0;
    sp.inf.hands = NULL;
    sp.inf.nhands = 0;
    sp.inf.hseat = -1;
    PyObject *hands_obj = NULL;
    u64 *cand = NULL;
    sp.deal_mean = sp.deal_sd = 0.0; /* rewards.DEAL_MEAN and DEAL_SD: given with chance */
    if (!PyArg_ParseTupleAndKeywords(
            args, kwargs, "OOOOKLdddddOdppppOdiippppddpOi", search_names, &opts_obj, &view_obj,
            &order_obj, &bias_obj, &seed, &iterations, &sp.seconds, &sp.c, &pl.epsilon,
            &sp.point_scale, &sp.win_weight, &worth_obj, &pl.scopa, &sp.halving, &sp.cpu_clock,
            &pl.blind, &pl.expand_best, &ev_obj, &sp.inf.infer, &sp.inf.tries, &sp.depth,
            &pl.reply, &sp.opp_playout, &sp.opp_blind, &sp.chance, &sp.deal_mean, &sp.deal_sd,
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

static PyObject *py_search(PyObject *self, PyObject *spec) {
    /* The NativeSearch's fields by name, parsed as keywords: the dict holds a reference
       to each value until the search is done. */
    (void)self;
    PyObject *kwargs = PyDict_New();
    if (!kwargs) return NULL;
    for (char **name = search_names; *name; name++) {
        PyObject *value = PyObject_GetAttrString(spec, *name);
        if (!value || PyDict_SetItemString(kwargs, *name, value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(kwargs);
            return NULL;
        }
        Py_DECREF(value);
    }
    PyObject *none = PyTuple_New(0);
    PyObject *res = none ? search_keywords(none, kwargs) : NULL;
    Py_XDECREF(none);
    Py_DECREF(kwargs);
    return res;
}

static PyMethodDef module_methods[] = {
    {"sample_world", py_sample_world, METH_VARARGS, sample_world_doc},
    {"search", py_search, METH_O, search_doc},
    {"violations", py_violations, METH_VARARGS, violations_doc},
    {"reply_worth", py_reply_worth, METH_VARARGS, reply_worth_doc},
    {"best_exact", py_best_exact, METH_VARARGS, best_exact_doc},
    {"sampled_exact", py_sampled_exact, METH_VARARGS, sampled_exact_doc},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "_search",
    .m_doc = "The bots' compiled inference, playouts and ISMCTS loop (_search.c; docs/bots.md).",
    .m_size = -1,
    .m_methods = module_methods,
};

PyMODINIT_FUNC PyInit__search(void) {
    init_tables();
    return PyModule_Create(&module_def);
}

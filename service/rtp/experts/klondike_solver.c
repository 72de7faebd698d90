/* A perfect-information solver for the Klondike family (Vegas draw one, Vegas draw three,
 * Klondike), for the RTP lab's strong player. Loaded with ctypes by klondike_solver.py, which
 * says how it is built and what each entry point takes; klondike_model.py is the reference
 * for the rules (tests/unit/test_klondike_solver.py checks this file against it).
 *
 * A position is the fast model's (klondike_model.State) with the stock and waste as one
 * "talon" in draw order: talon[0..pos) is the waste (its top at pos - 1) and talon[pos..tlen)
 * the stock (the next card drawn at pos). A draw moves pos on by min(draw, left); a recycle
 * (only with the stock empty) sets pos to 0, one pass fewer; a waste card played leaves the
 * talon. That is exactly the server's stock: a recycle turns the waste over, order kept.
 *
 * The search: depth first from a settled position (face-down tops turned, and every card
 * that goes up safely sent up: an Ace or a Two, or a card whose other-colour foundations hold
 * every card that could be built on it), over "macro" moves: a talon card is reached by the
 * draws (and at most one recycle: a second brings back the same cards with a pass fewer) that
 * bring it to the top of the waste, then played, so draws never branch on their own. Moves are
 * ordered by promise (uncovering a face-down card, the deepest column first; the waste card;
 * a column's top card to its foundation; other talon cards, fewest draws first; freeing a
 * card; a card back off a foundation) and pointless ones are never tried (a King from a bare
 * column to an empty one; a bare column emptied with no King to use it; part of a run moved
 * unless the card it leaves goes up or takes the waste card; a card back off a foundation
 * unless a face-up card or the waste card could go on it). A transposition table (Zobrist
 * hash; the columns hashed as a set, so columns swapped are one position) remembers the most
 * cards on the foundations found below each position, so a position is searched once
 * whichever way it is reached. Every search has a node budget, spent depth first or, better
 * for a small budget, widening (``search``: greedy lines first, then more and more levels in
 * full); its answer is the most cards on the foundations any line it saw reaches: exact when
 * exhaustive, else a lower bound. */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NCOL 7
#define COLMAX 24
#define TALMAX 24
#define NCARD 52
#define UNK 52 /* a card the player has not seen: it matches nothing */
#define FULL 13
#define MAXMOVES 256
#define MAXDEPTH 300
#define MAXLINE 32768

enum { DRAW, RECYCLE, TURN, COL_COL, COL_FOUND, WASTE_COL, WASTE_FOUND, FOUND_COL };
/* Search moves beyond the primitives: a talon card brought to the top and played. */
enum { TALON = 8 };

typedef struct {
    int8_t col[NCOL][COLMAX];
    int8_t len[NCOL], down[NCOL];
    int8_t found[4];
    int8_t talon[TALMAX];
    int8_t tlen, pos, passes; /* passes: the table's passes_left, -1 unlimited */
    int8_t draw, explicit_turn;
} Pos;

typedef struct {
    int8_t kind, a, b, n;
} Prim;

/* A search move. COL_COL (a, b, n): the top n cards of column a onto column b. COL_FOUND (a).
 * FOUND_COL (a = suit, b = column). TALON: talon card a, brought up with `recycle` (0/1),
 * played to column b (-1: its foundation). Plain stock moves at the root: DRAW, RECYCLE,
 * WASTE_COL (b), WASTE_FOUND. */
typedef struct {
    int8_t kind, a, b, n, recycle;
    int16_t score;
} Mv;

/* --- the rules' tables, from Python (klondike_model's, built from the rules' predicates) --- */

static int8_t PAR[NCARD + 1][2];   /* the cards a card may be built on (-1: none) */
static int8_t CHILD[NCARD + 1][2]; /* the cards that may be built on a card */
static int8_t KINGC[NCARD + 1];
static int8_t OTH[4][2]; /* the suits of the other colour */
static int READY = 0;

static uint64_t Z_COL[NCARD + 1][COLMAX], Z_DOWN[COLMAX][NCARD + 1], Z_FOUND[4][FULL + 1];
static uint64_t Z_POS[TALMAX + 1], Z_PASS[16];

static uint64_t splitmix(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* parents: 52 x 2 (-1 pad), kings: 52, other: 4 x 2. */
int ks_init(const int32_t *parents, const int32_t *kings, const int32_t *other) {
    memset(CHILD, -1, sizeof CHILD);
    for (int c = 0; c <= NCARD; c++) {
        PAR[c][0] = PAR[c][1] = -1;
        KINGC[c] = 0;
    }
    for (int c = 0; c < NCARD; c++) {
        KINGC[c] = (int8_t)kings[c];
        for (int k = 0; k < 2; k++) {
            int p = parents[2 * c + k];
            PAR[c][k] = (int8_t)p;
            if (p >= 0) {
                if (CHILD[p][0] < 0)
                    CHILD[p][0] = (int8_t)c;
                else
                    CHILD[p][1] = (int8_t)c;
            }
        }
    }
    for (int s = 0; s < 4; s++)
        for (int k = 0; k < 2; k++) OTH[s][k] = (int8_t)other[2 * s + k];
    uint64_t seed = 20090401u;
    for (int c = 0; c <= NCARD; c++)
        for (int i = 0; i < COLMAX; i++) Z_COL[c][i] = splitmix(&seed);
    for (int d = 0; d < COLMAX; d++)
        for (int c = 0; c <= NCARD; c++) Z_DOWN[d][c] = splitmix(&seed);
    for (int s = 0; s < 4; s++)
        for (int h = 0; h <= FULL; h++) Z_FOUND[s][h] = splitmix(&seed);
    for (int i = 0; i <= TALMAX; i++) Z_POS[i] = splitmix(&seed);
    for (int i = 0; i < 16; i++) Z_PASS[i] = splitmix(&seed);
    READY = 1;
    return 0;
}

/* --- positions to and from Python's flat arrays --------------------------------------------- */

enum {
    P_LEN = 0, P_DOWN = 7, P_FOUND = 14, P_TLEN = 18, P_POS = 19, P_PASSES = 20, P_DRAW = 21,
    P_TURN = 22, P_TALON = 23, P_COLS = P_TALON + TALMAX, P_SIZE = P_COLS + NCOL * COLMAX
};

int ks_layout(void) { return P_SIZE; }

static void decode(const int32_t *v, Pos *p) {
    memset(p, 0, sizeof *p);
    for (int i = 0; i < NCOL; i++) {
        p->len[i] = (int8_t)v[P_LEN + i];
        p->down[i] = (int8_t)v[P_DOWN + i];
        for (int k = 0; k < p->len[i]; k++) {
            int c = v[P_COLS + i * COLMAX + k];
            p->col[i][k] = (int8_t)(c < 0 ? UNK : c);
        }
    }
    for (int s = 0; s < 4; s++) p->found[s] = (int8_t)v[P_FOUND + s];
    p->tlen = (int8_t)v[P_TLEN];
    p->pos = (int8_t)v[P_POS];
    p->passes = (int8_t)v[P_PASSES];
    p->draw = (int8_t)v[P_DRAW];
    p->explicit_turn = (int8_t)v[P_TURN];
    for (int k = 0; k < p->tlen; k++) {
        int c = v[P_TALON + k];
        p->talon[k] = (int8_t)(c < 0 ? UNK : c);
    }
}

static void encode(const Pos *p, int32_t *v) {
    memset(v, 0, sizeof(int32_t) * P_SIZE);
    for (int i = 0; i < NCOL; i++) {
        v[P_LEN + i] = p->len[i];
        v[P_DOWN + i] = p->down[i];
        for (int k = 0; k < p->len[i]; k++) {
            int c = p->col[i][k];
            v[P_COLS + i * COLMAX + k] = c == UNK ? -1 : c;
        }
    }
    for (int s = 0; s < 4; s++) v[P_FOUND + s] = p->found[s];
    v[P_TLEN] = p->tlen;
    v[P_POS] = p->pos;
    v[P_PASSES] = p->passes;
    v[P_DRAW] = p->draw;
    v[P_TURN] = p->explicit_turn;
    for (int k = 0; k < p->tlen; k++) v[P_TALON + k] = p->talon[k] == UNK ? -1 : p->talon[k];
}

/* --- the rules' moves ---------------------------------------------------------------------- */

static inline int suit_of(int c) { return c / 13; }
static inline int height_of(int c) { return c % 13; }
static inline int fits_found(const Pos *p, int c) {
    return c < NCARD && p->found[suit_of(c)] == height_of(c);
}
static inline int top_up(const Pos *p, int j) { /* the face-up top of column j, or -1 */
    return p->len[j] > p->down[j] ? p->col[j][p->len[j] - 1] : -1;
}
static inline int units(const Pos *p) {
    return p->found[0] + p->found[1] + p->found[2] + p->found[3];
}
static inline int can_recycle(const Pos *p) {
    return p->pos == p->tlen && p->pos > 0 && (p->passes < 0 || p->passes > 1);
}

static void talon_remove(Pos *p, int k) {
    memmove(p->talon + k, p->talon + k + 1, (size_t)(p->tlen - k - 1));
    p->tlen--;
    if (k < p->pos) p->pos--;
}

/* What the rules then play by themselves: auto-turn (Klondike), and auto-complete. */
static void automatic(Pos *p) {
    int downs = 0, cards = 0;
    for (int i = 0; i < NCOL; i++) {
        if (!p->explicit_turn && p->down[i] && p->down[i] == p->len[i]) p->down[i]--;
        downs += p->down[i];
        cards += p->len[i];
    }
    if (p->tlen == 0 && downs == 0 && cards) {
        for (int i = 0; i < NCOL; i++) p->len[i] = 0;
        for (int s = 0; s < 4; s++) p->found[s] = FULL;
    }
}

/* One primitive move (the player's), then what the rules play by themselves. */
static void step(Pos *p, Prim m) {
    switch (m.kind) {
    case DRAW: {
        int k = p->tlen - p->pos;
        if (k > p->draw) k = p->draw;
        p->pos = (int8_t)(p->pos + k);
        break;
    }
    case RECYCLE:
        p->pos = 0;
        if (p->passes > 0) p->passes--;
        break;
    case TURN:
        p->down[m.a]--;
        break;
    case COL_COL: {
        int i = m.a, j = m.b, n = m.n, left = p->len[i] - n;
        memcpy(p->col[j] + p->len[j], p->col[i] + left, (size_t)n);
        p->len[j] = (int8_t)(p->len[j] + n);
        p->len[i] = (int8_t)left;
        if (p->down[i] > left) p->down[i] = (int8_t)left;
        break;
    }
    case COL_FOUND: {
        int i = m.a, c = p->col[i][p->len[i] - 1];
        p->len[i]--;
        if (p->down[i] > p->len[i]) p->down[i] = p->len[i];
        p->found[suit_of(c)]++;
        break;
    }
    case WASTE_COL: {
        int c = p->talon[p->pos - 1];
        talon_remove(p, p->pos - 1);
        p->col[m.a][p->len[m.a]++] = (int8_t)c;
        break;
    }
    case WASTE_FOUND: {
        int c = p->talon[p->pos - 1];
        talon_remove(p, p->pos - 1);
        p->found[suit_of(c)]++;
        break;
    }
    case FOUND_COL: {
        int s = m.a, c = 13 * s + p->found[s] - 1;
        p->found[s]--;
        p->col[m.b][p->len[m.b]++] = (int8_t)c;
        break;
    }
    }
    automatic(p);
}

/* May card c go on column j (a King only on an empty one)? */
static inline int fits_col(const Pos *p, int c, int j) {
    if (!p->len[j]) return KINGC[c];
    int t = top_up(p, j);
    return t >= 0 && (PAR[c][0] == t || PAR[c][1] == t);
}

static int push(Prim *out, int n, int kind, int a, int b, int k) {
    out[n].kind = (int8_t)kind;
    out[n].a = (int8_t)a;
    out[n].b = (int8_t)b;
    out[n].n = (int8_t)k;
    return n + 1;
}

/* Every primitive move the rules allow (klondike_model.Model.legal, unpruned). */
static int legal(const Pos *p, Prim *out) {
    int n = 0;
    if (p->pos < p->tlen)
        n = push(out, n, DRAW, 0, 0, 0);
    else if (can_recycle(p))
        n = push(out, n, RECYCLE, 0, 0, 0);
    if (p->pos > 0) {
        int w = p->talon[p->pos - 1];
        if (fits_found(p, w)) n = push(out, n, WASTE_FOUND, 0, 0, 0);
        for (int j = 0; j < NCOL; j++)
            if (fits_col(p, w, j)) n = push(out, n, WASTE_COL, j, 0, 0);
    }
    for (int i = 0; i < NCOL; i++) {
        int up = p->len[i] - p->down[i];
        for (int k = 1; k <= up; k++) {
            int c = p->col[i][p->len[i] - k];
            for (int j = 0; j < NCOL; j++)
                if (j != i && fits_col(p, c, j)) n = push(out, n, COL_COL, i, j, k);
        }
        if (up > 0 && fits_found(p, p->col[i][p->len[i] - 1])) n = push(out, n, COL_FOUND, i, 0, 0);
    }
    for (int s = 0; s < 4; s++)
        if (p->found[s])
            for (int j = 0; j < NCOL; j++)
                if (fits_col(p, 13 * s + p->found[s] - 1, j)) n = push(out, n, FOUND_COL, s, j, 0);
    if (p->explicit_turn)
        for (int i = 0; i < NCOL; i++)
            if (p->len[i] && p->down[i] == p->len[i]) n = push(out, n, TURN, i, 0, 0);
    return n;
}

/* --- the moves that never hurt ------------------------------------------------------------- */

static inline int safe_up(const Pos *p, int c) {
    int h = height_of(c), need = h <= 1 ? 0 : h, s = suit_of(c);
    return p->found[OTH[s][0]] >= need && p->found[OTH[s][1]] >= need;
}

/* Turn face-down tops and send up safe cards until none is left (klondike_model's
 * Solver.settle: the same closure), appending the player's moves to line (may be NULL). */
static void settle(Pos *p, Prim *line, int *nline) {
    for (;;) {
        int downs = 0, cards = 0;
        for (int i = 0; i < NCOL; i++) {
            downs += p->down[i];
            cards += p->len[i];
        }
        if (p->tlen == 0 && downs == 0) {
            if (cards) {
                for (int i = 0; i < NCOL; i++) p->len[i] = 0;
                for (int s = 0; s < 4; s++) p->found[s] = FULL;
            }
            return;
        }
        int acted = 0;
        for (int i = 0; i < NCOL; i++)
            if (p->down[i] && p->down[i] == p->len[i]) {
                p->down[i]--;
                if (p->explicit_turn && line && *nline < MAXLINE)
                    *nline = push(line, *nline, TURN, i, 0, 0);
                acted = 1;
                break;
            }
        if (acted) continue;
        for (int s = 0; s < 4 && !acted; s++) {
            int h = p->found[s];
            if (h == FULL) continue;
            int c = 13 * s + h;
            if (!safe_up(p, c)) continue;
            for (int i = 0; i < NCOL; i++)
                if (p->len[i] && p->col[i][p->len[i] - 1] == c && p->len[i] > p->down[i]) {
                    p->len[i]--;
                    p->found[s]++;
                    if (line && *nline < MAXLINE) *nline = push(line, *nline, COL_FOUND, i, 0, 0);
                    acted = 1;
                    break;
                }
            if (!acted && p->pos > 0 && p->talon[p->pos - 1] == c) {
                talon_remove(p, p->pos - 1);
                p->found[s]++;
                if (line && *nline < MAXLINE) *nline = push(line, *nline, WASTE_FOUND, 0, 0, 0);
                acted = 1;
            }
        }
        if (!acted) return;
    }
}

/* --- the search's moves -------------------------------------------------------------------- */

/* Move-ordering weights (higher first), tuned on full-knowledge searches of lab deals. A talon
 * card costs W_FIRST_DRAW if it needs drawing at all, W_DRAW a draw (a card drawn past cannot
 * come back until the next pass) and W_RECYCLED for a recycle; an uncovering move W_DOWN per
 * face-down card it leaves (the deepest column first). */
enum {
    W_UNCOVER_FOUND = 1000,
    W_UNCOVER = 900,
    W_TALON_FOUND = 860,
    W_TALON_COL = 850,
    W_FOUND = 800,
    W_FREE_FOUND = 520,
    W_FREE = 500,
    W_EMPTY = 450,
    W_FOUND_COL = 400,
    W_RECYCLED = 300,
    W_FIRST_DRAW = 150,
    W_DRAW = 10,
    W_DOWN = 1
};

typedef struct {
    int8_t top_at[NCARD + 1]; /* the column whose face-up top a card is, or -1 */
    uint8_t up[NCARD + 1];    /* face up in a column */
    int empty;                /* the first empty column, or -1 */
    int waste;                /* the waste's top card, or -1 */
} Where;

static void where(const Pos *p, Where *w) {
    memset(w->top_at, -1, sizeof w->top_at);
    memset(w->up, 0, sizeof w->up);
    w->empty = -1;
    for (int j = 0; j < NCOL; j++) {
        if (!p->len[j]) {
            if (w->empty < 0) w->empty = j;
            continue;
        }
        for (int k = p->down[j]; k < p->len[j]; k++) w->up[p->col[j][k]] = 1;
        int t = top_up(p, j);
        if (t >= 0) w->top_at[t] = (int8_t)j;
    }
    w->waste = p->pos > 0 ? p->talon[p->pos - 1] : -1;
}

static inline int add(Mv *out, int n, int kind, int a, int b, int k, int recycle, int score) {
    if (n >= MAXMOVES) return n;
    out[n].kind = (int8_t)kind;
    out[n].a = (int8_t)a;
    out[n].b = (int8_t)b;
    out[n].n = (int8_t)k;
    out[n].recycle = (int8_t)recycle;
    out[n].score = (int16_t)score;
    return n + 1;
}

/* A run of n cards from column i whose bottom card is c, onto every column it goes on. */
static int runs_onto(const Where *w, Mv *out, int n, int i, int k, int c, int score) {
    if (KINGC[c]) {
        if (w->empty >= 0) n = add(out, n, COL_COL, i, w->empty, k, 0, score);
        return n;
    }
    for (int q = 0; q < 2; q++) {
        int par = PAR[c][q];
        if (par < 0) continue;
        int j = w->top_at[par];
        if (j >= 0 && j != i) n = add(out, n, COL_COL, i, j, k, 0, score);
    }
    return n;
}

/* A talon card (or the waste top, kind WASTE_*) to its foundation or a column. */
static int talon_targets(const Pos *p, const Where *w, Mv *out, int n, int c, int k, int recycle,
                         int draws, int plain) {
    int cost = (draws ? W_FIRST_DRAW : 0) + W_DRAW * draws + (recycle ? W_RECYCLED : 0);
    if (fits_found(p, c))
        n = plain ? add(out, n, WASTE_FOUND, 0, 0, 0, 0, W_TALON_FOUND)
                  : add(out, n, TALON, k, -1, 0, recycle, W_TALON_FOUND - cost);
    if (KINGC[c]) {
        if (w->empty >= 0)
            n = plain ? add(out, n, WASTE_COL, 0, w->empty, 0, 0, W_TALON_COL)
                      : add(out, n, TALON, k, w->empty, 0, recycle, W_TALON_COL - cost);
        return n;
    }
    for (int q = 0; q < 2; q++) {
        int par = PAR[c][q];
        if (par < 0) continue;
        int j = w->top_at[par];
        if (j >= 0)
            n = plain ? add(out, n, WASTE_COL, 0, j, 0, 0, W_TALON_COL)
                      : add(out, n, TALON, k, j, 0, recycle, W_TALON_COL - cost);
    }
    return n;
}

static int king_waiting(const Pos *p) {
    int placed = 0;
    for (int j = 0; j < NCOL; j++)
        if (p->len[j] && KINGC[p->col[j][0]]) placed++;
    for (int s = 0; s < 4; s++)
        if (p->found[s] == FULL) placed++;
    return placed < 4;
}

/* The moves the search tries from a settled position, unsorted. plain: draws and recycles as
 * they are (the root, where the stock may hold unknown cards) instead of talon moves. */
static int gen(const Pos *p, Mv *out, int plain) {
    Where w;
    where(p, &w);
    int n = 0;
    int kw = -1; /* king_waiting, computed when needed */
    for (int i = 0; i < NCOL; i++) {
        int d = p->down[i], len = p->len[i], up = len - d;
        if (up <= 0) continue;
        int base = p->col[i][d];
        if (d > 0) {
            /* 1. Uncover a face-down card. */
            n = runs_onto(&w, out, n, i, up, base, W_UNCOVER + W_DOWN * d);
            if (up == 1 && fits_found(p, base)) n = add(out, n, COL_FOUND, i, 0, 0, 0, W_UNCOVER_FOUND + W_DOWN * d);
        } else if (!KINGC[base] && w.empty < 0) {
            /* Empty a bare column for a King that could use it. */
            if (kw < 0) kw = king_waiting(p);
            if (kw) n = runs_onto(&w, out, n, i, up, base, W_EMPTY);
        }
        /* 2. A column top to its foundation (not uncovering). */
        int top = p->col[i][len - 1];
        if ((d == 0 || up > 1) && fits_found(p, top)) n = add(out, n, COL_FOUND, i, 0, 0, 0, W_FOUND);
        /* 3. Part of a run, when the card it leaves on top goes up or takes the waste card. */
        for (int k = d; k < len - 1; k++) {
            int e = p->col[i][k], b = p->col[i][k + 1];
            int goes_up = fits_found(p, e);
            int takes = w.waste >= 0 && w.waste != b && (CHILD[e][0] == w.waste || CHILD[e][1] == w.waste);
            if (goes_up || takes)
                n = runs_onto(&w, out, n, i, len - k - 1, b, goes_up ? W_FREE_FOUND : W_FREE);
        }
    }
    /* 4. The talon. */
    if (plain) {
        if (p->pos > 0) n = talon_targets(p, &w, out, n, p->talon[p->pos - 1], p->pos - 1, 0, 0, 1);
        if (p->pos < p->tlen)
            n = add(out, n, DRAW, 0, 0, 0, 0, 0);
        else if (can_recycle(p))
            n = add(out, n, RECYCLE, 0, 0, 0, 0, 0);
    } else if (p->tlen) {
        uint8_t met[TALMAX] = {0};
        if (p->pos > 0) {
            met[p->pos - 1] = 1;
            n = talon_targets(p, &w, out, n, p->talon[p->pos - 1], p->pos - 1, 0, 0, 0);
        }
        int draws = 0;
        for (int q = p->pos; q < p->tlen;) {
            q += p->draw;
            if (q > p->tlen) q = p->tlen;
            draws++;
            met[q - 1] = 1;
            n = talon_targets(p, &w, out, n, p->talon[q - 1], q - 1, 0, draws, 0);
        }
        if (p->passes < 0 || p->passes > 1) {
            for (int q = 0; q < p->tlen;) {
                q += p->draw;
                if (q > p->tlen) q = p->tlen;
                draws++;
                if (met[q - 1]) continue; /* reached in this pass: a recycle only costs a pass */
                n = talon_targets(p, &w, out, n, p->talon[q - 1], q - 1, 1, draws, 0);
            }
        }
    }
    /* 5. A card back off a foundation, when a face-up card or the waste card could go on it. */
    for (int s = 0; s < 4; s++) {
        int h = p->found[s];
        if (h < 2) continue;
        int c = 13 * s + h - 1;
        if (safe_up(p, c)) continue; /* settling would send it straight back */
        int wanted = 0;
        for (int q = 0; q < 2; q++) {
            int ch = CHILD[c][q];
            if (ch >= 0 && (w.up[ch] || ch == w.waste)) wanted = 1;
        }
        if (!wanted) continue;
        if (KINGC[c]) {
            if (w.empty >= 0) n = add(out, n, FOUND_COL, s, w.empty, 0, 0, W_FOUND_COL);
        } else
            for (int q = 0; q < 2; q++) {
                int par = PAR[c][q];
                if (par >= 0 && w.top_at[par] >= 0)
                    n = add(out, n, FOUND_COL, s, w.top_at[par], 0, 0, W_FOUND_COL);
            }
    }
    /* Most promising first (stable: equal scores keep the generator's order). */
    for (int a = 1; a < n; a++) {
        Mv m = out[a];
        int b = a - 1;
        while (b >= 0 && out[b].score < m.score) {
            out[b + 1] = out[b];
            b--;
        }
        out[b + 1] = m;
    }
    return n;
}

/* Play a search move: its primitives one by one (appended to line, which may be NULL). */
static void play(Pos *p, const Mv *m, Prim *line, int *nline) {
    Prim seq[3 * TALMAX + 4];
    int ns = 0;
    switch (m->kind) {
    case TALON: {
        int k = m->a;
        Pos q = *p;
        if (m->recycle) {
            while (q.pos < q.tlen) {
                step(&q, (Prim){DRAW, 0, 0, 0});
                seq[ns++] = (Prim){DRAW, 0, 0, 0};
            }
            step(&q, (Prim){RECYCLE, 0, 0, 0});
            seq[ns++] = (Prim){RECYCLE, 0, 0, 0};
        }
        while (q.pos < k + 1) {
            step(&q, (Prim){DRAW, 0, 0, 0});
            seq[ns++] = (Prim){DRAW, 0, 0, 0};
        }
        seq[ns++] = m->b < 0 ? (Prim){WASTE_FOUND, 0, 0, 0} : (Prim){WASTE_COL, m->b, 0, 0};
        break;
    }
    case COL_COL:
        seq[ns++] = (Prim){COL_COL, m->a, m->b, m->n};
        break;
    case COL_FOUND:
        seq[ns++] = (Prim){COL_FOUND, m->a, 0, 0};
        break;
    case FOUND_COL:
        seq[ns++] = (Prim){FOUND_COL, m->a, m->b, 0};
        break;
    case WASTE_COL:
        seq[ns++] = (Prim){WASTE_COL, m->b, 0, 0};
        break;
    default: /* DRAW, RECYCLE, WASTE_FOUND */
        seq[ns++] = (Prim){m->kind, 0, 0, 0};
    }
    for (int k = 0; k < ns; k++) {
        step(p, seq[k]);
        if (line && *nline < MAXLINE) line[(*nline)++] = seq[k];
    }
}

/* --- the transposition table --------------------------------------------------------------- */

#define TT_BITS 18
#define TT_SIZE (1u << TT_BITS)
#define TT_PROBE 8
enum { ONPATH = 1, PARTIAL = 2, DONE = 3 };

typedef struct {
    uint64_t key;
    uint32_t gen;
    int8_t value;
    uint8_t flag;
} Ent;

static _Thread_local Ent *TT = NULL;
static _Thread_local uint32_t GEN = 0;

static int tt_ready(void) {
    if (!TT) {
        TT = calloc(TT_SIZE, sizeof(Ent));
        if (!TT) return 0;
    }
    GEN++;
    if (GEN == 0) { /* wrapped: forget everything */
        memset(TT, 0, TT_SIZE * sizeof(Ent));
        GEN = 1;
    }
    return 1;
}

static Ent *tt_find(uint64_t key) {
    uint32_t i = (uint32_t)key & (TT_SIZE - 1);
    for (int k = 0; k < TT_PROBE; k++) {
        Ent *e = &TT[(i + k) & (TT_SIZE - 1)];
        if (e->gen == GEN && e->key == key) return e;
    }
    return NULL;
}

static void tt_put(uint64_t key, int value, int flag) {
    uint32_t i = (uint32_t)key & (TT_SIZE - 1);
    Ent *slot = NULL;
    for (int k = 0; k < TT_PROBE; k++) {
        Ent *e = &TT[(i + k) & (TT_SIZE - 1)];
        if (e->gen == GEN && e->key == key) {
            slot = e;
            break;
        }
        if (!slot && (e->gen != GEN || e->flag != ONPATH)) slot = e; /* never evict the path */
    }
    if (!slot) return;
    slot->key = key;
    slot->gen = GEN;
    slot->value = (int8_t)value;
    slot->flag = (uint8_t)flag;
}

static uint64_t hash(const Pos *p) {
    uint64_t h = Z_POS[p->pos] ^ Z_PASS[(p->passes + 1) & 15];
    for (int s = 0; s < 4; s++) h ^= Z_FOUND[s][p->found[s]];
    for (int j = 0; j < NCOL; j++) {
        int len = p->len[j];
        if (!len) continue;
        /* A column's own hash, mixed before it joins the others (a sum: columns are a set), so
         * cards are bound to their column, not only to their height in it. */
        uint64_t c = Z_DOWN[p->down[j]][p->col[j][0]];
        for (int k = 0; k < len; k++) c ^= Z_COL[p->col[j][k]][k];
        h += splitmix(&c);
    }
    return h;
}

/* --- the search ---------------------------------------------------------------------------- */

typedef struct {
    long nodes, budget;
    int best;          /* the most cards on the foundations seen */
    Prim *path;        /* the line to the current position (lines only) */
    int npath;
    Prim *best_line;   /* the line to the best (lines only) */
    int nbest;
    int full_depth; /* below it, only the most promising move at each position */
    int cut;        /* some position's moves were cut so */
} Search;

static int dfs(Search *S, const Pos *p, int depth) {
    int u = units(p);
    if (u > S->best) {
        S->best = u;
        if (S->best_line) {
            memcpy(S->best_line, S->path, sizeof(Prim) * (size_t)S->npath);
            S->nbest = S->npath;
        }
    }
    if (u == NCARD) return u;
    uint64_t key = hash(p);
    Ent *e = tt_find(key);
    int best = u;
    if (e) {
        if (e->flag != PARTIAL) return e->value; /* searched, or on the path (a loop) */
        if (e->value > best) best = e->value;
    }
    if (S->nodes >= S->budget || depth >= MAXDEPTH) return best;
    tt_put(key, best, ONPATH);
    S->nodes++;
    Mv moves[MAXMOVES];
    int n = gen(p, moves, 0);
    int flag = DONE;
    if (depth >= S->full_depth && n > 1) {
        n = 1;
        flag = PARTIAL;
        S->cut = 1;
    }
    for (int k = 0; k < n; k++) {
        if (S->nodes >= S->budget) {
            flag = PARTIAL;
            break;
        }
        Pos c = *p;
        int mark = S->npath;
        Prim *line = S->best_line ? S->path : NULL;
        play(&c, &moves[k], line, &S->npath);
        settle(&c, line, &S->npath);
        int v = dfs(S, &c, depth + 1);
        S->npath = mark;
        if (v > best) {
            best = v;
            if (best == NCARD) break;
        }
    }
    if (depth >= MAXDEPTH - 1) flag = PARTIAL;
    tt_put(key, best, flag);
    return best;
}

/* A search of at most S->budget positions from a settled position p: the most cards on the
 * foundations any line it saw reaches. widen 0: depth first. widen k > 0: depth first,
 * widening: first the most promising move alone at every position (a greedy line), then every
 * move at the first k levels and the most promising below, then 2k levels, and so on, each
 * round with a table of its own, until the budget is spent or a round cut nothing (it was
 * exhaustive). Tuned on lab deals: the greedy rounds spread a small budget over the whole
 * game, where depth first spends it all under the first few moves. `forbid` (may be NULL): a
 * position no line may pass through (the player's own, when its moves are weighed apart). */
static int search(Search *S, const Pos *p, int widen, const Pos *forbid) {
    int best = -1;
    for (int d = 0;; d += widen) {
        if (!tt_ready()) break;
        if (forbid) tt_put(hash(forbid), units(forbid), ONPATH);
        S->full_depth = widen ? d : MAXDEPTH;
        S->cut = 0;
        int v = dfs(S, p, 0);
        if (v > best) best = v;
        if (S->best > best) best = S->best; /* a position cut short by a loop under-reports */
        if (!widen || !S->cut || best == NCARD || S->nodes >= S->budget || d >= MAXDEPTH) break;
    }
    return best;
}

/* --- entry points -------------------------------------------------------------------------- */

/* Every legal primitive move (4 ints each: kind, a, b, n); returns how many. */
int ks_legal(const int32_t *pos, int32_t *out) {
    Pos p;
    decode(pos, &p);
    Prim m[MAXMOVES];
    int n = legal(&p, m);
    for (int k = 0; k < n; k++) {
        out[4 * k] = m[k].kind;
        out[4 * k + 1] = m[k].a;
        out[4 * k + 2] = m[k].b;
        out[4 * k + 3] = m[k].n;
    }
    return n;
}

/* The position after a primitive move and what the rules then play by themselves. */
int ks_step(const int32_t *pos, const int32_t *move, int32_t *out) {
    Pos p;
    decode(pos, &p);
    step(&p, (Prim){(int8_t)move[0], (int8_t)move[1], (int8_t)move[2], (int8_t)move[3]});
    encode(&p, out);
    return 0;
}

/* Settle a position in place; the player's moves it made go to line (4 ints each). */
int ks_settle(int32_t *pos, int32_t *line, int max) {
    Pos p;
    decode(pos, &p);
    Prim l[MAXLINE];
    int n = 0;
    settle(&p, l, &n);
    encode(&p, pos);
    if (n > max) n = max;
    for (int k = 0; k < n; k++) {
        line[4 * k] = l[k].kind;
        line[4 * k + 1] = l[k].a;
        line[4 * k + 2] = l[k].b;
        line[4 * k + 3] = l[k].n;
    }
    return n;
}

/* The search's moves from a position, most promising first: for each, its primitives (at most
 * `per` of 4 ints, their count in counts[k]) and the position after them (unsettled). */
int ks_children(const int32_t *pos, int plain, int32_t *counts, int32_t *prims, int per,
                int32_t *after, int max) {
    Pos p;
    decode(pos, &p);
    Mv moves[MAXMOVES];
    int n = gen(&p, moves, plain);
    if (n > max) n = max;
    for (int k = 0; k < n; k++) {
        Pos c = p;
        Prim l[3 * TALMAX + 4];
        int nl = 0;
        play(&c, &moves[k], l, &nl);
        counts[k] = nl;
        for (int q = 0; q < nl && q < per; q++) {
            prims[(k * per + q) * 4] = l[q].kind;
            prims[(k * per + q) * 4 + 1] = l[q].a;
            prims[(k * per + q) * 4 + 2] = l[q].b;
            prims[(k * per + q) * 4 + 3] = l[q].n;
        }
        encode(&c, after + k * P_SIZE);
    }
    return n;
}

/* The most cards on the foundations a search (widening `widen`; at most `budget` positions)
 * finds from pos (settled first), and its line (primitives, 4 ints each, at most max; the
 * count in *nline). Returns -1 if the solver is not initialised or out of memory. */
int ks_solve(const int32_t *pos, long budget, int widen, int32_t *line, int max, int32_t *nline,
             long *nodes) {
    if (!READY) return -1;
    static _Thread_local Prim path[MAXLINE], best_line[MAXLINE];
    Pos p;
    decode(pos, &p);
    int n0 = 0;
    settle(&p, path, &n0);
    Search S = {0, budget, -1, path, n0, best_line, 0, 0, 0};
    int v = search(&S, &p, widen, NULL);
    int n = S.nbest < max ? S.nbest : max;
    for (int k = 0; k < n; k++) {
        line[4 * k] = best_line[k].kind;
        line[4 * k + 1] = best_line[k].a;
        line[4 * k + 2] = best_line[k].b;
        line[4 * k + 3] = best_line[k].n;
    }
    *nline = n;
    *nodes = S.nodes;
    return v;
}

/* The value of each candidate primitive move from pos (a world: every card known): the most
 * cards on the foundations a search (widening `widen`; at most `budget` positions) finds after
 * it, no line passing back through pos (that line is another candidate's). Returns the
 * positions searched in all, or -1 if the solver is not initialised or out of memory. */
long ks_evaluate(const int32_t *pos, const int32_t *cands, int ncands, long budget, int widen,
                 int32_t *values) {
    if (!READY) return -1;
    Pos p;
    decode(pos, &p);
    Search S = {0, 0, -1, NULL, 0, NULL, 0, 0, 0};
    for (int k = 0; k < ncands; k++) {
        Pos c = p;
        step(&c, (Prim){(int8_t)cands[4 * k], (int8_t)cands[4 * k + 1], (int8_t)cands[4 * k + 2],
                        (int8_t)cands[4 * k + 3]});
        settle(&c, NULL, NULL);
        S.budget = S.nodes + budget;
        S.best = -1;
        values[k] = search(&S, &c, widen, &p);
        if (values[k] < 0) return -1;
    }
    return S.nodes;
}

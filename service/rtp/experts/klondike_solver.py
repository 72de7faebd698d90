"""The Klondike family's perfect-information solver, in C (``klondike_solver.c``: its comment
has the search), loaded with ctypes for the strong player (``klondike_strong``).

It speaks the fast model's positions and moves (``klondike_model``: a ``State``, a ``Move``)
and takes the rules' building tables from that model (``PARENTS``, ``KING``,
``OTHER_COLOUR``, themselves computed from the game's predicates), so neither restates a
rule; tests/unit/test_klondike_solver.py checks its moves, positions and lines against the
model's on random positions.

Building: ``make install`` (and so ``make test`` and ``make run``) compiles it with the system
C compiler into ``native/klondike_solver.so`` (git-ignored) by running this module
(``python -m service.rtp.experts.klondike_solver``); :data:`COMMAND` is the one place the
command is written. A library that is missing or older than its source when first used is
built the same way then; if that fails, the error names ``make install``.
"""

from __future__ import annotations

import array
import ctypes
import os
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

from service.rtp.experts import klondike_model as km

SOURCE = Path(__file__).with_name("klondike_solver.c")
#: Not beside its source: a ``.so`` in a package is taken for a Python extension module.
LIBRARY = Path(__file__).with_name("native") / "klondike_solver.so"
#: How the library is built (``{out}`` and ``{src}`` filled in): the system C compiler.
COMMAND = ("cc", "-O2", "-shared", "-fPIC", "-o", "{out}", "{src}")

#: The flat position the C side reads (klondike_solver.c's P_* layout): its length, and where
#: each part starts.
P_LEN, P_DOWN, P_FOUND, P_TLEN, P_POS, P_PASSES, P_DRAW, P_TURN, P_TALON = (
    0, 7, 14, 18, 19, 20, 21, 22, 23,
)  # fmt: skip
TALON_MAX = 24
COLUMN_MAX = 24
P_COLS = P_TALON + TALON_MAX
P_SIZE = P_COLS + km.COLUMNS * COLUMN_MAX
#: Room for the search's moves from one position, and a line's primitives.
MOVES_MAX = 256
SEGMENT_MAX = 80
LINE_MAX = 32_768
#: The search's widening step (klondike_solver.c's ``search``): 0 is plain depth first.
WIDEN = 5

Array = ctypes.Array[ctypes.c_int32]

_lock = threading.Lock()
_lib: ctypes.CDLL | None = None


def build(target: Path = LIBRARY) -> None:
    """Compile the library (atomically: a process loading it never sees half a file)."""
    target.parent.mkdir(exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=".so", dir=target.parent)
    os.close(fd)
    try:
        command = [part.format(out=tmp, src=SOURCE) for part in COMMAND]
        subprocess.run(command, check=True, capture_output=True, text=True)
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _stale() -> bool:
    return not LIBRARY.exists() or LIBRARY.stat().st_mtime < SOURCE.stat().st_mtime


def library() -> ctypes.CDLL:
    """The loaded library, built first if it is missing or older than its source."""
    global _lib
    with _lock:
        if _lib is None:
            if _stale():
                try:
                    build()
                except (OSError, subprocess.CalledProcessError) as e:
                    detail = getattr(e, "stderr", "") or str(e)
                    raise RuntimeError(
                        f"the Klondike solver {LIBRARY} is missing or older than its source, "
                        f"and building it failed ({detail.strip()}); run `make install`"
                    ) from e
            assert array.array("i").itemsize == 4  # _ints hands C int32s over as C ints
            lib = ctypes.CDLL(str(LIBRARY))
            _declare(lib)
            if lib.ks_layout() != P_SIZE:
                raise RuntimeError(f"{LIBRARY.name} is out of date; run `make install`")
            parents = [p for ps in km.PARENTS for p in (*ps, -1, -1)[:2]]
            kings = [int(k) for k in km.KING]
            other = [t for ts in km.OTHER_COLOUR for t in ts]
            lib.ks_init(_ints(parents), _ints(kings), _ints(other))
            _lib = lib
        return _lib


def _declare(lib: ctypes.CDLL) -> None:
    i32p = ctypes.POINTER(ctypes.c_int32)
    longp = ctypes.POINTER(ctypes.c_long)
    lib.ks_layout.restype = ctypes.c_int
    lib.ks_init.argtypes = [i32p, i32p, i32p]
    lib.ks_legal.argtypes = [i32p, i32p]
    lib.ks_step.argtypes = [i32p, i32p, i32p]
    lib.ks_settle.argtypes = [i32p, i32p, ctypes.c_int]
    lib.ks_children.argtypes = [
        i32p, ctypes.c_int, i32p, i32p, ctypes.c_int, i32p, ctypes.c_int,
    ]  # fmt: skip
    lib.ks_solve.argtypes = [i32p, ctypes.c_long, ctypes.c_int, i32p, ctypes.c_int, i32p, longp]
    lib.ks_evaluate.argtypes = [i32p, i32p, ctypes.c_int, ctypes.c_long, ctypes.c_int, i32p]
    lib.ks_evaluate.restype = ctypes.c_long


def _ints(values: Sequence[int]) -> Array:
    buffer = array.array("i", values)  # C ints: 32 bits; far faster than ctypes' own copy
    return (ctypes.c_int32 * len(buffer)).from_buffer(buffer)


def _move(m: Sequence[int]) -> km.Move:
    """A C primitive (kind, a, b, n) as the model's move tuple."""
    kind = m[0]
    if kind in (km.DRAW, km.RECYCLE, km.WASTE_FOUND):
        return (kind,)
    if kind in (km.TURN, km.COL_FOUND, km.WASTE_COL):
        return (kind, m[1])
    if kind == km.FOUND_COL:
        return (kind, m[1], m[2])
    return (kind, m[1], m[2], m[3])


def _prims(moves: Sequence[km.Move]) -> list[int]:
    return [x for m in moves for x in (*m, 0, 0, 0)[:4]]


def _moves(flat: Array, n: int, at: int = 0) -> list[km.Move]:
    return [_move(flat[at + 4 * k : at + 4 * k + 4]) for k in range(n)]


class Solver:
    """The C solver for one variant (its draw count, passes and turning, from the model)."""

    def __init__(self, model: km.Model) -> None:
        self.lib = library()
        self.draw_count = model.draw_count
        self.explicit_turn = model.explicit_turn

    # --- positions ----------------------------------------------------------------------------

    def encode(self, st: km.State) -> Array:
        cols, downs, found, stock, waste, passes = st
        v = [0] * P_SIZE
        for i, col in enumerate(cols):
            v[P_LEN + i] = len(col)
            v[P_DOWN + i] = downs[i]
            v[P_COLS + i * COLUMN_MAX : P_COLS + i * COLUMN_MAX + len(col)] = col
        v[P_FOUND : P_FOUND + 4] = found
        talon = (*waste, *stock[::-1])  # draw order: the waste, then the stock from its top
        v[P_TLEN] = len(talon)
        v[P_POS] = len(waste)
        v[P_PASSES] = -1 if passes is None else passes
        v[P_DRAW] = self.draw_count
        v[P_TURN] = int(self.explicit_turn)
        v[P_TALON : P_TALON + len(talon)] = talon
        return _ints(v)

    @staticmethod
    def decode(v: Sequence[int]) -> km.State:
        cols = tuple(
            tuple(v[P_COLS + i * COLUMN_MAX : P_COLS + i * COLUMN_MAX + v[P_LEN + i]])
            for i in range(km.COLUMNS)
        )
        downs = tuple(v[P_DOWN : P_DOWN + km.COLUMNS])
        found = tuple(v[P_FOUND : P_FOUND + 4])
        talon = tuple(v[P_TALON : P_TALON + v[P_TLEN]])
        pos = v[P_POS]
        passes = None if v[P_PASSES] < 0 else v[P_PASSES]
        return cols, downs, found, talon[pos:][::-1], talon[:pos], passes

    # --- the rules' moves (what the conformance test checks) ----------------------------------

    def legal(self, st: km.State) -> list[km.Move]:
        out = (ctypes.c_int32 * (4 * MOVES_MAX))()
        n = self.lib.ks_legal(self.encode(st), out)
        return _moves(out, n)

    def step(self, st: km.State, m: km.Move) -> km.State:
        out = (ctypes.c_int32 * P_SIZE)()
        self.lib.ks_step(self.encode(st), _ints(_prims([m])), out)
        return self.decode(list(out))

    def settle(self, st: km.State) -> tuple[km.State, list[km.Move]]:
        """The position with face-down tops turned and safe cards up, and the player's moves
        that did it."""
        v = self.encode(st)
        line = (ctypes.c_int32 * (4 * 256))()
        n = self.lib.ks_settle(v, line, 256)
        return self.decode(list(v)), _moves(line, n)

    def children(self, st: km.State, plain: bool) -> list[tuple[list[km.Move], km.State]]:
        """The search's moves from a settled position, most promising first: each as the
        player's moves and the position after them (unsettled). ``plain``: draws and recycles
        as they are (the root's moves) instead of talon moves."""
        counts = (ctypes.c_int32 * MOVES_MAX)()
        prims = (ctypes.c_int32 * (MOVES_MAX * SEGMENT_MAX * 4))()
        after = (ctypes.c_int32 * (MOVES_MAX * P_SIZE))()
        n = self.lib.ks_children(
            self.encode(st), int(plain), counts, prims, SEGMENT_MAX, after, MOVES_MAX
        )
        return [
            (
                _moves(prims, min(counts[k], SEGMENT_MAX), k * SEGMENT_MAX * 4),
                self.decode(after[k * P_SIZE : (k + 1) * P_SIZE]),
            )
            for k in range(n)
        ]

    # --- search -------------------------------------------------------------------------------

    def solve(
        self, st: km.State, budget: int, widen: int = WIDEN
    ) -> tuple[int, list[km.Move], int]:
        """The most cards on the foundations a search of at most ``budget`` positions finds
        from ``st`` (every card known; ``widen``: the C search's ``search``), a line of the
        player's moves reaching it, and the positions searched."""
        line = (ctypes.c_int32 * (4 * LINE_MAX))()
        n = ctypes.c_int32()
        nodes = ctypes.c_long()
        best = self.lib.ks_solve(
            self.encode(st), budget, widen, line, LINE_MAX, ctypes.byref(n), ctypes.byref(nodes)
        )
        if best < 0:
            raise MemoryError("the Klondike solver could not allocate its table")
        return best, _moves(line, n.value), nodes.value

    def evaluate(
        self, world: km.State, cands: Sequence[km.Move], budget: int, widen: int = WIDEN
    ) -> tuple[list[int], int]:
        """Each candidate move's value in a world: the most cards on the foundations a search
        of at most ``budget`` positions finds after it (no line passing back through
        ``world``), and the positions searched in all."""
        values = (ctypes.c_int32 * len(cands))()
        nodes = self.lib.ks_evaluate(
            self.encode(world), _ints(_prims(cands)), len(cands), budget, widen, values
        )
        if nodes < 0:
            raise MemoryError("the Klondike solver could not allocate its table")
        return list(values), nodes


if __name__ == "__main__":  # `make install`: build the library
    build()

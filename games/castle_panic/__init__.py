"""Castle Panic (Fireside Games, 2009/2023): defend the castle against the monster horde.

``ENGINE`` is the :class:`games.base.Engine` the service serves as game id ``castle_panic``.
Modules, in the order a reader wants them: :mod:`.data` (board and components as data),
:mod:`.state` (frozen values), :mod:`.evolve` (events -> state), :mod:`.rules` (setup, decide,
the commands; its steps in :mod:`.run`, :mod:`.drawing`, :mod:`.monsters`, :mod:`.turns`,
:mod:`.phases`, :mod:`.cards`), :mod:`.legal` (legal moves), :mod:`.views` (per-viewer views and
redaction), :mod:`.bots` (random and heuristic players). Rules and open questions: docs/games/castle_panic.md.

    >>> from games.draw import Draw
    >>> from games.base import fold
    >>> state = fold(ENGINE, ENGINE.setup({}, 2, Draw(b"k", "doc", 1)))
    >>> view = ENGINE.view(state, 0)
    >>> view["phase"], len(view["board"]["monsters"]), view["hand_counts"]
    ('discard', 6, [6, 6])
    >>> ENGINE.legal_moves(state, 0)[-1]
    {'type': 'end_phase', 'args': {}}
    >>> state = fold(ENGINE, ENGINE.decide(state, 0, {"type": "end_phase", "args": {}}, Draw(b"k", "doc", 2)), state)
    >>> state.turn.phase.value
    'trade'
"""

from __future__ import annotations

from games.castle_panic.engine import CastlePanicEngine

ENGINE = CastlePanicEngine()

__all__ = ["ENGINE", "CastlePanicEngine"]

"""Every engine the service serves is a :class:`games.base.Engine`, every bot a :class:`games.base.Bot`,
and a websocket connection a :class:`projections.live.Subscriber`: mypy proves the annotated
assignments below (``mypy`` runs in ``.ci/run``), and the tests check the same objects at run time."""

from __future__ import annotations

from collections.abc import Mapping

from games import default_engines
from games.base import Bot, Engine, SplitViews, play_steps
from games.carcassonne import bots as carcassonne_bots
from games.carcassonne.engine import CarcassonneEngine
from games.carcassonne.state import State as CarcassonneState
from games.castle import ENGINE as CASTLE
from games.castle import bots as castle_bots
from games.castle.engine import CastleEngine
from games.castle.state import CastleState
from games.castle_panic import bots as castle_panic_bots
from games.castle_panic.engine import CastlePanicEngine
from games.castle_panic.state import State as CastlePanicState
from projections.live import Subscriber
from service.edge.outbox import Connection
from tests.tinygame import TINY

ENGINES: tuple[Engine, ...] = (CarcassonneEngine(), CastleEngine(CASTLE.dataset), CastlePanicEngine(), TINY)
SPLIT: tuple[SplitViews, ...] = (CarcassonneEngine(), CastleEngine(CASTLE.dataset), CastlePanicEngine())
BOTS: tuple[Mapping[str, Bot], ...] = (carcassonne_bots.BOTS, castle_bots.BOTS, castle_panic_bots.BOTS)


CARCASSONNE: Engine[CarcassonneState] = CarcassonneEngine()
CASTLE_ENGINE: Engine[CastleState] = CASTLE
CASTLE_PANIC: Engine[CastlePanicState] = CastlePanicEngine()
"""Each engine is the Engine of its own state type (mypy refuses these lines if a hook's state
type drifts from the one its evolve returns)."""
SPLIT_TYPED: tuple[SplitViews[CarcassonneState], SplitViews[CastleState], SplitViews[CastlePanicState]] = (
    CarcassonneEngine(), CASTLE, CastlePanicEngine())


def _connection_is_a_subscriber(conn: Connection) -> Subscriber[bytes]:
    return conn  # a static check only: mypy refuses this line if Connection stops being one


def test_every_served_engine_is_one_of_the_checked_classes() -> None:
    served = default_engines()
    assert {type(engine) for engine in served.values()} == {type(e) for e in ENGINES[:3]}
    for engine in ENGINES:
        assert engine.min_seats <= engine.max_seats and isinstance(engine.secret_options, frozenset)


def test_every_bot_names_itself_under_its_key() -> None:
    for bots in BOTS:
        assert bots and all(bot.name == name for name, bot in bots.items())


RANDOM_BOTS: dict[str, Bot] = {
    "carcassonne": carcassonne_bots.RANDOM,
    "castle": castle_bots.RANDOM,
    "castle_panic": castle_panic_bots.RANDOM,
}


SPLIT_GAMES = [
    ("carcassonne", {}, 3),
    ("castle", {"falcon": True}, 2),
    ("castle_panic", {}, 2),
    ("castle_panic", {"hidden_hands": True}, 3),
    ("castle_panic", {"overlord": True}, 3),
]
"""Games whose views differ by viewer in every way an engine splits them: hidden hands, trades,
the Overlord's tokens, legal moves."""


def test_a_split_view_is_the_whole_view_over_many_random_states() -> None:
    """``view`` is ``public_view`` and ``private_view`` together, the two share no key and the
    public part names no ``legal``: the service builds the public part once for every viewer."""
    served = default_engines()
    assert all(isinstance(served[name], type(engine)) for name, engine in zip(
        ("carcassonne", "castle", "castle_panic"), SPLIT, strict=True))
    checked = 0
    for name, options, seats in SPLIT_GAMES:
        engine = served[name]
        split: SplitViews = engine  # type: ignore[assignment]
        for game in range(2):
            states = [engine.initial_state()]
            states += [state for state, _, _ in play_steps(engine, seats, options, RANDOM_BOTS[name], game)]
            for state in states[::3]:
                public = split.public_view(state)
                assert "legal" not in public
                for viewer in [*range(seats), None]:
                    private = split.private_view(state, viewer)
                    assert not set(public) & set(private)
                    assert engine.view(state, viewer) == {**public, **private}
                    checked += 1
    assert checked > 500

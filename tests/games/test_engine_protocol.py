"""Every engine the service serves is a :class:`games.base.Engine`, every bot a :class:`games.base.Bot`,
and a websocket connection a :class:`projections.live.Subscriber`: mypy proves the annotated
assignments below (``mypy`` runs in ``.ci/run``), and the tests check the same objects at run time."""

from __future__ import annotations

from collections.abc import Mapping

from games import default_engines
from games.base import Bot, Engine
from games.carcassonne import bots as carcassonne_bots
from games.carcassonne.engine import CarcassonneEngine
from games.castle import ENGINE as CASTLE
from games.castle import bots as castle_bots
from games.castle.engine import CastleEngine
from games.castle_panic import bots as castle_panic_bots
from games.castle_panic.engine import CastlePanicEngine
from projections.live import Subscriber
from service.ws import Connection
from tests.tinygame import TINY

ENGINES: tuple[Engine, ...] = (CarcassonneEngine(), CastleEngine(CASTLE.dataset), CastlePanicEngine(), TINY)
BOTS: tuple[Mapping[str, Bot], ...] = (carcassonne_bots.BOTS, castle_bots.BOTS, castle_panic_bots.BOTS)


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

"""Drawing: castle cards (reshuffling the discards, dwindling resources), monster tokens, die
rolls and the Overlord's hidden hand. Each outcome is written into the event that shows it."""

from __future__ import annotations

from games.base import (
    Rng,
)
from games.base.rng import dealt_rest
from games.castle_panic.data import (
    CARD_KIND,
    CardCategory,
)
from games.castle_panic.run import CARDS, DIE, TOKENS, Run, hands_hidden
from games.castle_panic.state import State, Tokens

# --- drawing ----------------------------------------------------------------------------------


def draw_cards(run: Run, seat: int, count: int, rng: Rng, reason: str) -> None:
    """Draw ``count`` castle cards, reshuffling the discards into the deck when it runs out."""
    while count > 0:
        cards = run.state.cards
        if not cards.deck:
            if not cards.discard:
                return
            run.emit("deck_reshuffled", {"removed": _dwindled(run.state)})
            continue
        take = min(count, len(cards.deck))
        rest = dealt_rest(rng, CARDS, cards.deals, cards.dealt, len(cards.deck))
        drawn = list(rest[:take]) if rest is not None else rng.sample(cards.deck, take)
        run.emit("cards_drawn", {"seat": seat, "cards": drawn, "reason": reason, "hidden": hands_hidden(run.state)})
        count -= len(drawn)


def _dwindled(state: State) -> list[str]:
    """Dwindling Resources: each reshuffle takes 1 Brick and 1 Mortar (if discarded) out of play."""
    assert state.config is not None
    if not state.config.options.dwindling_resources:
        return []
    gone = []
    for category in (CardCategory.BRICK, CardCategory.MORTAR):
        found = sorted(card for card in state.cards.discard if CARD_KIND[card].category is category)
        if found:
            gone.append(found[0])
    return gone


def _next_tokens(tokens: Tokens, count: int, rng: Rng) -> list[str] | None:
    """The next ``count`` tokens of the monster pile's deal; ``None`` under a scheme that draws
    per decision."""
    rest = dealt_rest(rng, TOKENS, 0, tokens.dealt, len(tokens.pile))
    return None if rest is None else list(rest[:count])


def pile_token(state: State, rng: Rng) -> str:
    """The token drawn from the pile in phase 6."""
    dealt = _next_tokens(state.tokens, 1, rng)
    return dealt[0] if dealt is not None else rng.choice(state.tokens.pile)


def roll_die(state: State, rng: Rng) -> int:
    """A d6: the stream of the roll numbered by the rolls before it (``donjon-draw-2``)."""
    return rng.stream(DIE, state.house.rolls).randint(1, 6)


def overlord_draw(run: Run, count: int, plays: int, rng: Rng) -> None:
    pile = run.state.tokens.pile
    take = min(count, len(pile))
    drawn: list[str] = []
    if take > 0:
        dealt = _next_tokens(run.state.tokens, take, rng)
        drawn = dealt if dealt is not None else rng.sample(pile, take)
    assert run.state.config is not None
    run.emit("overlord_drew", {"seat": run.state.config.overlord, "tokens": drawn, "plays": plays})

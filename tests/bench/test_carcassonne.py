"""The benchmark module runs and reports every figure (values are not asserted: no clocks in tests)."""

from __future__ import annotations

from bench import carcassonne as bench


def test_board_of_80_tiles_is_built_at_a_tile_step():
    state = bench.board_of(80)
    assert len(state.table) >= 80 and state.phase.value == "place_tile"


def test_figures_names_every_measurement():
    figures = bench.figures()
    assert set(figures) == {
        "carcassonne.random_2p_games_per_s",
        "carcassonne.random_2p_games_per_s.inns_cathedrals",
        "carcassonne.legal_placements_80_tiles_ms",
        "carcassonne.legal_placements_80_tiles_cold_memo_ms",
        "carcassonne.legal_placements_plus_follower_spots_80_tiles_ms",
        "carcassonne.frontier_cells_80_tiles",
        "carcassonne.mean_legal_placements_per_tile_80_tiles",
    }
    assert all(float(v) > 0 for v in figures.values())

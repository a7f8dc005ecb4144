"""The game service: what a command, a seat request or a rematch does to a game (auth, cache,
decisions, seating, what a viewer may see), behind the one object the edge calls."""

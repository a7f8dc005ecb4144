"""Time: the turn clocks' keeper and who is away."""

"""Fairness: the seeds and how the service commits to them, secrets sealed at rest, the draw
schemes, the node's signing key, and the signed export with its offline checks (replay, verify)."""

"""Fairness: the seeds and how the service commits to them, secrets sealed at rest, the draw
schemes, the deployment's signing keys (kept sealed in the store, pinned by verifiers), and the
signed export with its offline checks (replay, verify)."""

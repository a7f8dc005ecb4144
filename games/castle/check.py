"""Check a Castle dataset file: ``python -m games.castle.check DATASET.json``.

An operator's tool (it reads the file it is given); the engine itself never reads files.
Prints a one-line summary, or every problem and exits non-zero.
"""

from __future__ import annotations

import sys

from games.castle.data import DatasetError, dataset_from_json


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python -m games.castle.check DATASET.json", file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as handle:
        text = handle.read()
    try:
        data = dataset_from_json(text)
    except DatasetError as error:
        print(error, file=sys.stderr)
        return 1
    provisional = ", ".join(dict(data.provisional)) or "nothing"
    print(f"{data.name}: valid ({sum(data.counts.values())} tiles; provisional: {provisional})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Running a node: the aiohttp app assembled, the engines served, ``donjon serve`` and its
workers, and the ``donjon`` command line."""

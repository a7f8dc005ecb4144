"""Packaging that pyproject.toml cannot say: the JavaScript client ships from its one copy.

``clients/js/src/`` (the client's ES modules, served to the web app at ``/app/client/``) becomes the
package data of ``service.web.client`` in the wheel, without a second copy in the repository.
"""

from setuptools import find_namespace_packages, setup

CLIENT = {"service.web.client": "clients/js/src"}

# Namespace packages too: data folders without an ``__init__.py`` (``games/castle/data/``) carry
# package data that the service reads at start.
setup(
    packages=find_namespace_packages(include=["service*", "events*", "projections*", "games*"]) + list(CLIENT),
    package_dir=CLIENT,
)

"""The archive fixtures (tests/archive_fixtures.py) for the tests of events/archive/."""

from tests.archive_fixtures import archive, archive_url, postgres_schema_url  # noqa: F401

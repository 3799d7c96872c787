"""The suite's root: tests/<area>/ hold the tests, each area's conftest.py its fixtures."""

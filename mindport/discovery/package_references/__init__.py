"""torch references of the pieces of torch-based packages that mindport maps (``mappings/data/packages.toml``):
what the torch side of a proof runs when the package is not installed (``discovery/stubs.py``), and what the mapping
entries are proven against then (tests/mappings/test_package_entries.py puts this folder on ``sys.path``)."""

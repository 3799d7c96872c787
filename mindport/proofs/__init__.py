"""The proofs of the mapping tables: each kind of entry, converted by the real converter
and run in both frameworks.

* ``function.py``: each entry's example in six call styles (and every runtime target again as a static graph);
* ``differential/``: each entry beyond its example (argument sets, call forms, dtypes and shapes);
* ``distributed.py``: the torch.distributed entries in 2 real processes per framework.

Nothing below ``cli/`` and the tests imports this package; it imports the converter and the tables.
"""

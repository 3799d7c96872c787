"""The proofs of the mapping tables: each kind of entry, and torch's object surface, converted by the real converter
and run in both frameworks.

* ``function.py``: each entry's example in six call styles (and every runtime target again as a static graph);
* ``differential/``: each entry beyond its example (argument sets, call forms, dtypes and shapes);
* ``distributed.py``: the torch.distributed entries in 2 real processes per framework;
* ``surface.py``: the object surface (mappings/data/surface/): every member of every mapped layer class enumerated
  from torch and read in both frameworks, and the Module/Parameter/Tensor members' programs.

* ``replay.py``: one stream of random draws for both sides of a model's proof (torch records, MindSpore replays),
  used by the parity sides and discovery's builder; it imports torch or MindSpore only when a proof runs.

Apart from ``replay.py``, nothing below ``cli/`` and the tests imports this package; it imports the converter and the
tables.
"""

"""Parity: the torch model and its MindSpore port on the same inputs and weights, compared output by output and layer
by layer. ``compare.py`` runs both sides, ``metrics.py`` measures, ``localize.py`` names the first divergent layer
(``hooks.py`` records every layer, ``configs.py`` and ``traps.py`` explain it), ``report.py`` renders, ``loading.py``
builds models and inputs from the command line's references."""

"""A configuration read from one of the repository's YAML files, as the builder hands it to a constructor
(``build.repository_config_value``): a dict whose keys are also attributes, nested (yacs' ``CfgNode``, which
``cfg.MODEL.EXTRA`` and ``cfg['MODEL']['EXTRA']`` both read, is a dict subclass of the kind). Pure Python: the same
on the torch and the MindSpore side."""
from __future__ import annotations


class Config(dict):
    """A dict whose keys are also attributes (read, set, deleted), nested dicts and the dicts in lists made alike
    (of this class: a subclass keeps its own). The one attribute dictionary of discovery: the builder's YAML
    configurations and the stand-ins for configuration libraries a machine lacks (``stubs.AttributeDict``)."""

    def __init__(self, data=(), **kwargs):
        super().__init__()
        for key, value in dict(data, **kwargs).items():
            self[key] = value

    def __setitem__(self, key, value):
        super().__setitem__(key, self._wrap(value))

    def __getattr__(self, name):
        if name.startswith("__"):  # copy, pickle and the like probe dunders: never keys
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value

    def __delattr__(self, name):
        try:
            del self[name]
        except KeyError:
            raise AttributeError(name) from None

    def _wrap(self, value):
        if isinstance(value, dict) and not isinstance(value, Config):
            return type(self)(value)
        if isinstance(value, list):
            return [self._wrap(v) for v in value]
        return value

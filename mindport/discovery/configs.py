"""A configuration read from one of the repository's YAML files, as the builder hands it to a constructor
(``build.repository_config_value``): a dict whose keys are also attributes, nested (yacs' ``CfgNode``, which
``cfg.MODEL.EXTRA`` and ``cfg['MODEL']['EXTRA']`` both read, is a dict subclass of the kind). Pure Python: the same
on the torch and the MindSpore side."""
from __future__ import annotations


class Config(dict):
    def __init__(self, data=(), **kwargs):
        super().__init__()
        for key, value in dict(data, **kwargs).items():
            self[key] = _wrap(value)

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self[name] = value


def _wrap(value):
    if isinstance(value, dict) and not isinstance(value, Config):
        return Config(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value

"""A package whose main module has the package's name (x_transformers/x_transformers.py) and re-exports it."""
from xt.xt import Net

__all__ = ["Net"]

"""The release of this springsim (the package's ``__version__``; OBJ files name it)."""

__version__ = "0.1.0"

"""The errors the normalizers raise (defined in the package's one tree, :mod:`fieldgraph.errors`)."""

from fieldgraph.errors import (
    FieldgraphError,
    FieldPathError,
    InputError,
    MissingExtraError,
    SchemaNormalizationError,
    UrnError,
    require,
)

__all__ = ["FieldPathError", "FieldgraphError", "InputError", "MissingExtraError", "SchemaNormalizationError",
           "UrnError", "require"]

"""Schema normalizers: every schema format -> one type model -> DataHub v2 field paths.

Pure code, no I/O.
"""

from .api import CONVERTERS, fields_of, normalize, normalize_text, to_model
from .errors import FieldgraphError, FieldPathError, SchemaNormalizationError, UrnError
from .fields import FieldType, SchemaField
from .paths import FieldPath, PathToken, is_v2, v1_path
from .urns import DatasetUrn, FieldUrn, make_dataset_urn, make_field_urn
from .visitor import walk

__all__ = [
    "CONVERTERS", "DatasetUrn", "FieldPath", "FieldPathError", "FieldType", "FieldUrn", "FieldgraphError",
    "PathToken", "SchemaField", "SchemaNormalizationError", "UrnError", "is_v2", "make_dataset_urn",
    "fields_of", "make_field_urn", "normalize", "normalize_text", "to_model", "v1_path", "walk",
]

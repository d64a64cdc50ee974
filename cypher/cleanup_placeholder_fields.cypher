// Placeholder fields no lineage edge refers to any more (fields a job declared, e.g. generated ones, stay).
MATCH (f:DatasetField {placeholder: true})
WHERE NOT (f)-[:DataDerivedFrom]-() AND coalesce(f.declared, false) = false
DETACH DELETE f

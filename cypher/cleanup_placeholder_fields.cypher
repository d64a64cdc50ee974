// Placeholder fields no lineage edge, present or past, refers to any more (fields a job declared stay).
MATCH (f:DatasetField {placeholder: true})
WHERE NOT (f)-[:DataDerivedFrom|PreviouslyDerivedFrom]-() AND coalesce(f.declared, false) = false
DETACH DELETE f

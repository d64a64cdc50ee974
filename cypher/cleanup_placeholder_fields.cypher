// Placeholder fields no lineage edge refers to any more.
MATCH (f:DatasetField {placeholder: true})
WHERE NOT (f)-[:DataDerivedFrom]-()
DETACH DELETE f

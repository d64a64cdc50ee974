// Placeholder fields no lineage edge, present or past, refers to any more (fields a job declared stay).
// The SET is a write, so Neo4j locks each candidate first (waiting for a concurrent writer that is linking it)
// and the second WHERE looks again: without it, a placeholder another writer linked meanwhile (read committed)
// would be deleted with its new edge.
MATCH (f:DatasetField {placeholder: true})
WHERE NOT (f)-[:DataDerivedFrom|PreviouslyDerivedFrom|RenamedFrom]-() AND coalesce(f.declared, false) = false
SET f.placeholder = true
WITH f
WHERE NOT (f)-[:DataDerivedFrom|PreviouslyDerivedFrom|RenamedFrom]-()
DETACH DELETE f

// cleanup_placeholder_fields, in the datasets a writer holds the locks of: their placeholder fields no lineage
// edge, present or past, refers to any more (fields a job declared stay). Another writer creating or linking a
// placeholder holds the lock of its dataset, so none of these is one it has created but not linked yet.
// Locked and looked at again, as in cleanup_placeholder_fields. $datasets: [dataset URN]
// (The filter follows a WITH: in a WHERE of the MATCH, FalkorDB starts from the placeholder index and scans every
// placeholder field once per dataset.)
UNWIND $datasets AS urn
MATCH (:Dataset {urn: urn})-[:HasField]->(f:DatasetField)
WITH f
WHERE f.placeholder = true AND NOT (f)-[:DataDerivedFrom|PreviouslyDerivedFrom|RenamedFrom]-()
  AND coalesce(f.declared, false) = false
SET f.placeholder = true
WITH f
WHERE NOT (f)-[:DataDerivedFrom|PreviouslyDerivedFrom|RenamedFrom]-()
DETACH DELETE f

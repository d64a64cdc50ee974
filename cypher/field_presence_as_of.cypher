// When fields came into the graph and whether an edge refers to them at $asOf (ms since the epoch):
// listedFrom (the first schema that listed it; null for a placeholder), firstReference (the first lineage edge
// that refers to it), firstJobReference (the first job run that wrote it: jobs declare the fields they write),
// referencedThen. $urns: [field urn]
UNWIND $urns AS urn
MATCH (:Dataset)-[h:HasField]->(f:DatasetField {urn: urn})
OPTIONAL MATCH (f)-[e:DataDerivedFrom|PreviouslyDerivedFrom]-()
WITH urn, f, h, min(CASE WHEN e IS NULL THEN null ELSE coalesce(e.validFrom, 0) END) AS firstReference,
     max(CASE WHEN e IS NOT NULL AND coalesce(e.validFrom, 0) <= $asOf AND (e.validTo IS NULL OR e.validTo > $asOf)
              THEN 1 ELSE 0 END) AS referencedThen
OPTIONAL MATCH (f)-[j:DataDerivedFrom|PreviouslyDerivedFrom]->()
WHERE j.sourceFormat IN ['cdap', 'openlineage', 'sql']
RETURN urn, CASE WHEN coalesce(f.placeholder, false) THEN null ELSE coalesce(h.validFrom, 0) END AS listedFrom,
       firstReference, min(CASE WHEN j IS NULL THEN null ELSE coalesce(j.validFrom, 0) END) AS firstJobReference,
       referencedThen

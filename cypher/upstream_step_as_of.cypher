// One hop upstream from a frontier of fields as of $asOf (ms since the epoch): the edges that held then, present
// (DataDerivedFrom) or past (PreviouslyDerivedFrom). Edges written before validity was kept hold from the start.
UNWIND $frontier AS urn
MATCH (f:DatasetField {urn: urn})-[e:DataDerivedFrom|PreviouslyDerivedFrom]->(u)
WHERE coalesce(e.validFrom, 0) <= $asOf AND (e.validTo IS NULL OR e.validTo > $asOf)
RETURN urn AS from, u.urn AS urn, u.datasetUrn AS datasetUrn, u.fieldPath AS fieldPath,
       u.placeholder AS placeholder, u.removed AS removed, u.ambiguous AS ambiguous, properties(e) AS edge

// One hop upstream from a frontier of fields over all time: every edge that holds now (DataDerivedFrom) or held
// once (PreviouslyDerivedFrom), with its interval in properties(e) (validFrom, validTo), for the timeline of the
// lineage around a field (`GET /api/v1/timeline`).
UNWIND $frontier AS urn
MATCH (f:DatasetField {urn: urn})-[e:DataDerivedFrom|PreviouslyDerivedFrom]->(u)
RETURN urn AS from, u.urn AS urn, u.datasetUrn AS datasetUrn, u.fieldPath AS fieldPath,
       u.placeholder AS placeholder, u.removed AS removed, u.ambiguous AS ambiguous, properties(e) AS edge

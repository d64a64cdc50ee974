// One hop upstream from a frontier of fields: the CLI walks this level by level (depth cap, time budget).
UNWIND $frontier AS urn
MATCH (f:DatasetField {urn: urn})-[e:DataDerivedFrom]->(u)
RETURN urn AS from, u.urn AS urn, u.datasetUrn AS datasetUrn, u.fieldPath AS fieldPath,
       u.placeholder AS placeholder, u.removed AS removed, u.ambiguous AS ambiguous, properties(e) AS edge

// The renames touching a frontier of fields, both ways: `into` true when the frontier's field is the new name
// ((field)-[:RenamedFrom]->(old)), false when it is the old one. A walk crosses them by the identity rules of
// graph/renames.py. $frontier: [field URN]
UNWIND $frontier AS urn
MATCH (f:DatasetField {urn: urn})-[r:RenamedFrom]->(o:DatasetField)
RETURN urn AS from, true AS into, o.urn AS urn, o.datasetUrn AS datasetUrn, o.fieldPath AS fieldPath,
       o.placeholder AS placeholder, o.removed AS removed, o.ambiguous AS ambiguous, properties(r) AS edge
UNION ALL
UNWIND $frontier AS urn
MATCH (f:DatasetField {urn: urn})<-[r:RenamedFrom]-(o:DatasetField)
RETURN urn AS from, false AS into, o.urn AS urn, o.datasetUrn AS datasetUrn, o.fieldPath AS fieldPath,
       o.placeholder AS placeholder, o.removed AS removed, o.ambiguous AS ambiguous, properties(r) AS edge

// When fields were listed or removed: each field's present state (since, removed) and its past states
// ([validFrom, validTo, removed]), for the identity rules of renames (graph/renames.py). $urns: [field URN]
UNWIND $urns AS urn
MATCH (f:DatasetField {urn: urn})
OPTIONAL MATCH (f)-[:HadState]->(s:FieldState)
RETURN urn, f.since AS since, f.removed AS removed, collect([s.validFrom, s.validTo, s.removed]) AS past

// Ambiguous field references that hold now: never resolved to one candidate silently.
MATCH (f:DatasetField {placeholder: true, ambiguous: true})
WHERE (f)-[:DataDerivedFrom]-() OR f.declared = true
OPTIONAL MATCH (f)-[e:DataDerivedFrom]-()
RETURN f.datasetUrn AS dataset, f.refPath AS reference, f.urn AS urn, f.candidates AS candidates, count(e) AS edges
ORDER BY dataset, reference

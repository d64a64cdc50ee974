// Ambiguous field references: never resolved to one candidate silently.
MATCH (f:DatasetField {placeholder: true, ambiguous: true})
OPTIONAL MATCH (f)-[e:DataDerivedFrom]-()
RETURN f.datasetUrn AS dataset, f.refPath AS reference, f.urn AS urn, f.candidates AS candidates, count(e) AS edges
ORDER BY dataset, reference

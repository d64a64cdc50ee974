// Placeholder fields: references not resolved to a schema field (ambiguous ones list their candidates).
MATCH (f:DatasetField {placeholder: true})
OPTIONAL MATCH (f)-[e:DataDerivedFrom]-()
RETURN f.datasetUrn AS dataset, f.refPath AS reference, f.urn AS urn, coalesce(f.ambiguous, false) AS ambiguous,
       f.candidates AS candidates, count(e) AS edges
ORDER BY dataset, reference

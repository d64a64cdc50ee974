// Placeholder fields that hold now: references not resolved to a schema field, with a lineage edge that holds
// now (or declared by a job); ambiguous ones list their candidates. Placeholders only past edges refer to are
// kept for as-of answers and not listed. A column a SQL statement derived keeps its number in the statement.
MATCH (f:DatasetField {placeholder: true})
WHERE (f)-[:DataDerivedFrom]-() OR f.declared = true
OPTIONAL MATCH (f)-[e:DataDerivedFrom]-()
RETURN f.datasetUrn AS dataset, f.refPath AS reference, f.urn AS urn, coalesce(f.ambiguous, false) AS ambiguous,
       f.candidates AS candidates, count(e) AS edges, f.column AS column
ORDER BY dataset, reference

// Dataset-level lineage rolled up from field edges; $urn (optional) keeps the edges touching one dataset.
MATCH (d:Dataset)-[:HasField]->(:DatasetField)-[e:DataDerivedFrom]->(u)
WITH d.urn AS downstream, coalesce(u.datasetUrn, u.urn) AS upstream, e
WHERE $urn IS NULL OR downstream = $urn OR upstream = $urn
RETURN downstream, upstream, count(e) AS fieldEdges, collect(DISTINCT e.transformation) AS transformations
ORDER BY downstream, upstream

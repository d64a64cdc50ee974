// Upstream fields of $urn as of $asOf (ms since the epoch), to depth 10, each with its path and the edges' properties
// (validFrom, validTo: when each held). For Neo4j Browser's table view or `fieldgraph query`.
MATCH p = (f:DatasetField {urn: $urn})-[:DataDerivedFrom|PreviouslyDerivedFrom*1..10]->(u)
WHERE all(e IN relationships(p) WHERE coalesce(e.validFrom, 0) <= $asOf AND (e.validTo IS NULL OR e.validTo > $asOf))
RETURN u.urn AS urn, length(p) AS depth, [n IN nodes(p) | n.urn] AS path,
       [r IN relationships(p) | properties(r)] AS edges
ORDER BY depth, urn

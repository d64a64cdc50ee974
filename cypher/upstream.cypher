// Upstream fields of $urn to depth 10, each with its path and edge properties (for Neo4j Browser).
MATCH p = (f:DatasetField {urn: $urn})-[:DataDerivedFrom*1..10]->(u)
RETURN u.urn AS urn, length(p) AS depth, [n IN nodes(p) | n.urn] AS path,
       [r IN relationships(p) | properties(r)] AS edges
ORDER BY depth, urn

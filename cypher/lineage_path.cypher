// A shortest lineage path from field $from up to field $to, to depth 10 (for Neo4j Browser).
MATCH p = (a:DatasetField {urn: $from})-[:DataDerivedFrom*1..10]->(b:DatasetField {urn: $to})
WITH p
ORDER BY length(p)
LIMIT 1
RETURN [n IN nodes(p) | n.urn] AS path, [r IN relationships(p) | properties(r)] AS edges

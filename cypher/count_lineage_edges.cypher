// How many of the planned lineage edges exist (the worker checks a batch after writing it: a concurrent
// writer's placeholder cleanup can remove a node between two statements). $rows: [{down, up, source}]
UNWIND $rows AS row
MATCH (d:DatasetField {urn: row.down})-[e:DataDerivedFrom]->(u {urn: row.up})
WHERE e.source = row.source
RETURN count(DISTINCT [row.down, row.up, row.source]) AS n

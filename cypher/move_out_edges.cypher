// Move the outgoing lineage edges of a resolved placeholder field to the real field. $rows: [{from, to}]
UNWIND $rows AS row
MATCH (p:DatasetField {urn: row.from})-[e:DataDerivedFrom]->(u)
MATCH (t:DatasetField {urn: row.to})
MERGE (t)-[n:DataDerivedFrom {source: e.source}]->(u)
SET n += properties(e)
DELETE e

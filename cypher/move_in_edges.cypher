// Move the incoming lineage edges of a resolved placeholder field to the real field. $rows: [{from, to}]
UNWIND $rows AS row
MATCH (x:DatasetField)-[e:DataDerivedFrom]->(p:DatasetField {urn: row.from})
MATCH (t:DatasetField {urn: row.to})
MERGE (x)-[n:DataDerivedFrom {source: e.source}]->(t)
SET n += properties(e)
DELETE e
